"""The counterfactual assessment, declared here (``ASSESSMENT``): its config (config), hooks (hooks)
and stages (stages: FTU, expansion, the metric stage per attribute, run on the shared pipeline's
stage functions in ``tasks/pipeline/``)."""

from equilens.tasks.assessments.counterfactual.config import CounterfactualRunConfig
from equilens.tasks.catalog import Assessment

ASSESSMENT = Assessment(
    config=CounterfactualRunConfig,
    default_config="configs/demo.yaml",
    order=1,
    card="Does the model answer differently when a prompt names another group? Prompts that mention "
         "gender, race or your own groups get counterfactual variants (he -> she, white -> Black, names "
         "swapped by gender and race), the model answers every variant, and LangFair's counterfactual "
         "metrics (sentiment parity, cosine, ROUGE-L and BLEU similarity) compare each pair of groups "
         "against a same-group noise floor, with a verdict in words.",
    flow="equilens.flows.counterfactual:counterfactual_assessment",
    hooks="equilens.tasks.assessments.counterfactual.hooks",
)
