"""Gaps between identity cells with the names as a sample of their group: prompts and names are
both random factors.

An identity run signals a cell through a few drawn names (``identity.names_per_cell``), and every
prompt is asked with two of them. A model that reacts to one particular name moves its cell's mean
on every prompt that name is asked with; a test that treats prompts as the only sample reads that as
the whole group treated differently, and a second draw of names makes the finding vanish. This is
Clark's *language-as-fixed-effect fallacy* (Clark 1973, J. Verbal Learning and Verbal Behavior 12,
335-359), for names as stimuli: the stimuli of a condition are a sample of it and belong in the
error term (Judd, Westfall & Kenny 2012, "Treating stimuli as a random factor in social
psychology", J. Personality and Social Psychology 103(1), 54-69).

**Design.** Prompts are crossed with names: a prompt is asked with the names of the same two slots
in every cell (:func:`equilens.tasks.inputs.personas.slots_for`; slot k holds names of about the
same frequency in every cell). The names of one slot in the compared cells are one *name cluster*:
they are drawn together (one frequency target per slot) and always asked on the same prompts in
the same role, so an effect of their common frequency cancels in a gap and an effect of either name
stays in its cluster. :func:`name_clusters` finds the clusters from the answers themselves: names of
the two sides asked on the same prompt in the same role are linked, and a cluster is a connected set
of names (a design without aligned slots gives fewer, larger clusters: wider intervals, never
narrower).

**Estimate.** The gap is the mean over prompts of the per-prompt difference of the two sides' mean
answers (one side alone for a one-sample score such as the judge's harm). It is linear in the
answers, gap = sum_i lambda_i y_i, so its variance under two-way clustering is the two-way
cluster-robust (sandwich) variance of Cameron, Gelbach & Miller (2011, "Robust inference with
multiway clustering", J. Business & Economic Statistics 29(2), 238-249):

    V = V_prompts + V_names - V_(prompt, name),

each term the sum over its clusters of the squared sum S of the answers' scores lambda_i e_i, with
e_i the residual of a fit with a mean per prompt and side. V_prompts is exactly the paired t-test's
s_d^2 / n over prompts; V_names - V_(prompt, name) is what the names add: the covariance of the
answers that share a name across prompts. Each name cluster's part is scaled by
c_g = 1 / (1 - 2 w_g + sum_h w_h^2), w_g the cluster's share of the gap's weight: the factor that
makes it unbiased when the clusters' effects share one variance, G / (G - 1) when they weigh alike
(the bias reduction of Bell & McCaffrey 2002, "Bias reduction in standard errors for linear
regression with multi-stage samples", Survey Methodology 28(2), 169-181). The sum is floored at 0,
so the interval is never narrower than the prompts-only one. The reference is Student's t on
Satterthwaite's degrees of freedom for a sum of variance estimates (Satterthwaite 1946, Biometrics
Bulletin 2(6), 110-114):

    df = V^2 / (V_prompts^2 / (n - 1) + Var(V_names) / 2),

with Var(V_names) / 2 = sum_g c_g^2 (E[S_g^2]^2 - sum_p v_pg^2), the variance of a cluster's
cross-products over prompts when its prompt terms S_pg are normal with variances v_pg (estimated
S_pg^4 / 3), E[S_g^2] being the cluster's share of V_names plus the noise within it (its
V_(prompt, name) terms); and at least V_names^2 / (G* - 1), G* = (sum w^2)^2 / sum w^4 the
clusters' effective number (G when they weigh alike). It behaves as the Satterthwaite df of a mixed
model with names as a random factor does
(Kuznetsova, Brockhoff & Christensen 2017, "lmerTest package: tests in linear mixed effects models",
J. Statistical Software 82(13)): n - 1 while the names' part is estimated at 0, and towards G* - 1
as soon as it is positive, since that part is then known only as well as a few clusters can tell
it. Ten names per cell cannot carry a finding as far as ten times as many prompts, and a gap that
one name makes cannot reach a small p-value; with two or three names per cell a gap is found only
where the names' part is estimated at 0 (such a finding is flagged ``few_names``). The interval is
gap +- t_df SE and the p-value two-sided, so the two agree; the closed form costs a few
``np.bincount`` passes over the answers, with no resampling. With ten names per cell and a model
whose names differ at random it stays somewhat liberal, as cluster-robust tests on few clusters do
(MacKinnon, Nielsen & Webb 2021, "Wild bootstrap and asymptotic inference with multiway
clustering", J. Business & Economic Statistics 39(2), 505-519):
``tests/benchmarks/bench_name_sampling.py`` measures its false findings and power on simulated
readings.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from equilens.tasks.stats.importing import IMPORTING

FEW_NAMES = 5
"""A cell with fewer distinct names than this in a finding is flagged ``few_names``: the finding may
be about those names rather than their group."""
METHOD = "t over prompts and names (two-way cluster-robust, Satterthwaite df)"
PROMPTS_ONLY = "paired t over prompts"
SIGN_FLIP = "permutation: signs flipped over prompts (every prompt's difference the same)"
EPSILON = float(np.finfo(float).eps)


@dataclass(frozen=True)
class TwoWayGap:
    """A gap with prompts and name clusters as random factors (see the module docstring)."""

    value: float
    se: float
    df: float
    ci_low: float
    ci_high: float
    p_value: float  # two-sided
    prompts: int
    clusters: int  # name clusters behind the gap (0: the answers carry no names; 1: names add nothing known)
    prompt_var: float  # V_prompts: the paired t-test's squared standard error
    name_var: float  # what the names add to the variance (>= 0)
    sd: float  # standard deviation of the per-prompt differences
    exact: bool = False  # no spread at all: the p-value is the exact sign-flip test's

    @property
    def method(self) -> str:
        if self.exact:
            return SIGN_FLIP
        return METHOD if self.clusters >= 2 else PROMPTS_ONLY


def components(links: Iterable[tuple[Hashable, Hashable]], keys: Iterable[Hashable] = ()) -> dict[Hashable, int]:
    """Connected components of the graph whose edges are ``links`` (and with ``keys`` as nodes too):
    each node's component as a code 0..k-1, numbered in the sorted order of each component's
    smallest node (as text), so the same links always give the same codes."""
    parent: dict[Hashable, Hashable] = {}

    def root(x: Hashable) -> Hashable:
        parent.setdefault(x, x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for k in keys:
        root(k)
    for a, b in links:
        ra, rb = root(a), root(b)
        if ra != rb:
            parent[max(ra, rb, key=str)] = min(ra, rb, key=str)
    roots = {x: root(x) for x in parent}
    smallest: dict[Hashable, str] = {}
    for x, r in roots.items():
        smallest[r] = min(smallest.get(r, str(x)), str(x))
    order = {r: i for i, r in enumerate(sorted(smallest, key=lambda r: smallest[r]))}
    return {x: order[r] for x, r in roots.items()}


def name_clusters(prompts: Sequence[object], roles: Sequence[object], sides: Sequence[int],
                  names: Sequence[object]) -> np.ndarray:
    """Each answer's name cluster (codes 0..G-1; -1 for an answer without a name). A name is keyed by
    its side, so one name in both compared cells is two names; the names asked on the same prompt in
    the same role (variant, control) are linked, and a cluster is a connected set of names
    (:func:`components`, over the distinct links only). Without roles (a distinct role per answer)
    every name is its own cluster."""
    import pandas as pd

    named_as = np.array(names, dtype=object)
    named_as[named_as == ""] = None
    name_codes, _ = pd.factorize(named_as, sort=True)  # None and NaN: -1
    out = np.full(len(name_codes), -1, np.int64)
    named = name_codes >= 0
    if not named.any():
        return out
    keys = name_codes[named] * 2 + (np.asarray(sides)[named] > 0)  # a name keyed by its side
    prompt_codes, _ = pd.factorize(np.asarray(prompts)[named])
    role_codes, role_ids = pd.factorize(np.asarray(roles, dtype=object)[named], use_na_sentinel=False)
    groups = prompt_codes * len(role_ids) + role_codes
    first = np.full(int(groups.max()) + 1, np.iinfo(np.int64).max)
    np.minimum.at(first, groups, keys)  # every name of a (prompt, role) is linked to its smallest
    links = np.unique(np.column_stack([keys, first[groups]]), axis=0)
    used = np.unique(keys)
    code = components(map(tuple, links.tolist()), used.tolist())
    out[named] = np.array([code[k] for k in used.tolist()])[np.searchsorted(used, keys)]
    return out


def sign_flip_p(gap: float, prompts: int) -> float:
    """The two-sided p of the sign-flip permutation test over ``prompts`` prompts whose differences
    all equal ``gap``: under no difference each prompt's sign is a fair coin, and only the two
    arrangements with every sign alike reach a mean as far from 0, so p = 2 / 2^n (1 for a gap of 0).
    A t-test has no answer here (no spread: its standard error is 0), and a gap that every prompt shows
    alike is the strongest evidence the prompts can give, not none."""
    return 1.0 if gap == 0 else min(1.0, 2.0 ** (1 - prompts))


def two_way_gap(values: np.ndarray, prompts: Sequence[object], sides: np.ndarray, clusters: np.ndarray,
                confidence: float) -> TwoWayGap | None:
    """The mean over prompts of sum_side side x (the side's mean answer on the prompt), with its
    two-way cluster-robust standard error, interval and t-test (see the module docstring).

    ``values``: one per answer (NaN: unread, left out); ``sides``: +1 for the first cell, -1 for the
    second, or +1 throughout for a one-sample score; ``clusters``: each answer's name cluster from
    :func:`name_clusters` (-1 throughout: no names, prompts alone). Only prompts where every side
    has a value count. None with fewer than two such prompts.
    """
    from equilens.tasks.stats.inference import cluster_codes
    with IMPORTING:
        from scipy.stats import t as student

    values = np.asarray(values, float)
    sides = np.asarray(sides, np.int64)
    clusters = np.asarray(clusters, np.int64)
    keep = np.isfinite(values)
    values, sides, clusters = values[keep], sides[keep], clusters[keep]
    (codes,), k = cluster_codes(np.asarray(prompts)[keep])
    side_list = np.unique(sides)
    s = np.searchsorted(side_list, sides)
    cell = codes * len(side_list) + s
    count = np.bincount(cell, minlength=k * len(side_list)).reshape(k, len(side_list))
    complete = np.asarray((count > 0).all(axis=1))
    if complete.sum() < 2:
        return None
    rows = complete[codes]
    values, sides, clusters, s = values[rows], sides[rows], clusters[rows], s[rows]
    codes = np.cumsum(complete)[codes[rows]] - 1  # the complete prompts renumbered 0..n-1
    n, width = int(complete.sum()), len(side_list)
    cell = codes * width + s
    m = np.bincount(cell, minlength=n * width).astype(float)
    means = np.bincount(cell, weights=values, minlength=n * width) / m
    d = (means.reshape(n, width) * side_list).sum(axis=1)
    gap = float(d.mean())
    delta = d - gap
    # each answer's score: lambda_i e_i, with e_i its residual from its prompt and side's mean plus
    # its side's share of the prompt's deviation from the gap; a prompt's scores sum to delta / n
    score = sides / (n * m[cell]) * (values - means[cell] + sides * delta[codes] / width)
    prompt_var = float(np.var(d, ddof=1) / n)
    named = clusters >= 0
    used, local = np.unique(clusters[named], return_inverse=True)  # the clusters with answers here
    g, name_var, name_spread = len(used), 0.0, 0.0
    if g >= 2:
        by_name = np.bincount(local, weights=score[named], minlength=g)
        by_both = np.bincount(codes[named] * g + local, weights=score[named], minlength=n * g)
        within = (by_both.reshape(n, g) ** 2).sum(axis=0)
        weight = np.bincount(local, weights=1 / (n * m[cell[named]]), minlength=g)
        weight = weight / weight.sum()
        square = float(weight @ weight)
        scale = 1 / (1 - 2 * weight + square)  # unbiased for a weighted mean's clusters (g / (g - 1) when equal)
        name_var = max(0.0, float(scale @ (by_name**2 - within)))
        if name_var > 0:
            effective = max(square**2 / float(np.sum(weight**4)) - 1, EPSILON)  # g - 1 when the clusters weigh alike
            expected = weight**2 * name_var / square / scale + within  # E[S_g^2]: the names' part and the noise
            # half the variance of V_names for normal terms S_pg (see the module docstring)
            fourth = (by_both.reshape(n, g) ** 4).sum(axis=0) / 3  # sum over prompts of Var(S_pg)^2
            name_spread = max(name_var**2 / effective, float(np.sum(scale**2 * (expected**2 - fourth))))
    var = prompt_var + name_var
    df = float(n - 1) if name_var == 0 else var**2 / (prompt_var**2 / (n - 1) + name_spread)
    se = float(np.sqrt(var))
    sd = float(np.std(d, ddof=1))
    if se == 0:  # every prompt's difference the same: no t, but the exact sign-flip test over prompts
        return TwoWayGap(gap, 0.0, df, gap, gap, sign_flip_p(gap, n), n, g, prompt_var, name_var, sd, exact=True)
    half = float(student.ppf(0.5 + confidence / 2, df)) * se
    p = float(2 * student.sf(abs(gap) / se, df))
    return TwoWayGap(gap, se, df, gap - half, gap + half, p, n, g, prompt_var, name_var, sd)
