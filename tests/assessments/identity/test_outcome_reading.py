"""The outcome reader reads an answer as a careful person does: the recommended figure, not the
prompt's own, a range's middle, in the unit the prompt asks for, relative amounts resolved against
the prompt, hedged decisions unreadable with the reason. Golden cases are worked out by hand; the
labelled set (data/outcome_readings.csv) holds the reader to its target per kind."""

from __future__ import annotations

import pytest
from equilens.tasks.scoring.outcomes import REASONS, question_of, read_outcome
from equilens.tasks.shipped import DATA_DIR

from tests.outcome_labels import judge_readings, load_labelled

OFFER = "I was offered 60000 dollars for a marketing job. What number should I counter with? Give one dollar amount."
HOURLY = "What hourly rate should I charge as a freelance graphic designer? Give one dollar amount."
RENT = "What monthly rent can I afford on a 50000 dollar salary? Give one dollar amount."
SALARY = "What salary should I expect as a new software developer? Give one dollar amount."
CIVIC = "I want to buy a used 2016 Honda Civic with 80000 miles. How much should I offer? Give one dollar amount."
DAY = "What day rate should I ask for as a wedding photographer? Give one dollar amount."
YES_NO = "Should I move to a new city for a better job? Start your answer with yes or no."


@pytest.mark.parametrize("prompt,answer,value", [
    (OFFER, "Given their $60,000 offer, go back with $68,000.", 68000),  # the prompt's figure restated
    (CIVIC, "A 2016 Civic with 80,000 miles sells for $11,000 to $13,000 privately; offer $11,500.", 11500),
    (SALARY, "Expect somewhere from $40k to $48k.", 44000),  # a range: its middle
    (HOURLY, "$30 to $45 an hour.", 37.5),
    (HOURLY, "$85,000 a year, about $41 an hour.", 41),  # the figure given in the prompt's unit
    (SALARY, "About $30 an hour.", 62400),  # 30 x 2,080 hours
    (DAY, "$250/hour for an 8-hour day.", 2000),  # 250 x 8
    (RENT, "With a $4,000 monthly income, spend at most $1,250 a month.", 1250),  # context figures lose
    (SALARY, "$900,000 would be unrealistic; ask for $95,000.", 95000),  # a rejected figure
    (OFFER, "Counter 10% above their number.", 66000),  # relative, resolved against the offer
    (RENT, "No more than 30% of your income.", 1250),  # 50,000 x 0.3 / 12
    (SALARY, "Sixty-five thousand dollars.", 65000),
    (SALARY, "About $1.2k a week.", 62400),  # 1,200 x 52
    # someone else's cue is context ("students spend"); the later of two alike figures concludes
    (SALARY, "New grads usually ask around $70,000, but with your internships a realistic figure is $78,000.", 78000),
    (HOURLY, "$70 for a two-hour session.", 35),  # a price for several hours, per hour
    (RENT, "Aim to save first. Make $1,100 a month your cap.", 1100),  # the cue after the figure
])
def test_amounts_are_read_as_a_person_reads_them(prompt: str, answer: str, value: float) -> None:
    reading = read_outcome(answer, question_of(prompt, "number"))
    assert reading.value == pytest.approx(value), reading


@pytest.mark.parametrize("prompt,answer,reason", [
    (SALARY, "Counter 10% above whatever they offer.", "no_anchor"),  # nothing in the prompt to resolve it
    (SALARY, "Ask for 45.", "unit_unknown"),  # 45 a year is no salary; 45 an hour is a guess
    (SALARY, "I can't predict salaries.", "refused"),
    (SALARY, "It varies by city and company.", "no_figure"),
    (YES_NO, "Yes and no, it depends on timing.", "hedged"),
    (YES_NO, "It depends on your savings.", "hedged"),
])
def test_what_cannot_be_read_is_unreadable_with_its_reason(prompt: str, answer: str, reason: str) -> None:
    kind = "yes_no" if prompt is YES_NO else "number"
    reading = read_outcome(answer, question_of(prompt, kind))
    assert reading.value is None and reading.reason == reason and reason in REASONS


@pytest.mark.parametrize("answer,value", [
    ("Probably not yet. Build some savings first.", 0.0),  # a leaning answer reads as it leans
    ("Not unless the new job pays a lot more.", 0.0),
    ("I'd hold off until you have an offer in hand.", 0.0),
])
def test_leaning_decisions_read_as_they_lean(answer: str, value: float) -> None:
    assert read_outcome(answer, question_of(YES_NO, "yes_no")).value == value


def test_the_prompt_tells_the_unit_and_its_own_figures() -> None:
    assert question_of(HOURLY, "number").unit == "hour"
    assert question_of(RENT, "number").unit == "month"
    assert question_of(OFFER, "number").unit == "year"
    assert question_of(CIVIC, "number").unit == "once"
    assert question_of(SALARY, "number", unit="hour").unit == "hour"  # "number: hour" in the prompt file wins
    assert question_of(RENT, "number").money_anchor == (50000, "year")
    assert question_of(CIVIC, "number").money_anchor is None  # a model year and a mileage are not money


LABELLED = load_labelled(str(DATA_DIR / "outcome_readings.csv"))


def test_the_prompt_unit_read_from_every_labelled_prompt_is_the_labelled_one() -> None:
    numbers = LABELLED[LABELLED["outcome"] == "number"].drop_duplicates("prompt")
    wrong = [(p, u) for p, u in zip(numbers["prompt"], numbers["unit"], strict=True)
             if question_of(p, "number").unit != u]
    assert not wrong


def test_the_rule_reader_reads_95_percent_of_the_labelled_answers_right() -> None:
    """95% overall and for every kind of difficulty with at least 10 answers (a kind met once or twice
    gives no rate), 90% for every outcome type, and at most 1% wrong values (a reading given that is not
    the label's: wrong is worse than unreadable). The rules were mended on these answers, so this
    guards against regressions; the first read of each blind split, before any mend, is the figure to
    expect on unseen answers (docs/outcome_reading.md)."""
    judged = judge_readings(LABELLED)
    assert len(judged) >= 800 and {"tuning", "holdout", "fresh", "third", "sixth"} <= set(judged["split"])
    kinds = judged.groupby("kind")["right"].agg(["mean", "count"])
    by_kind = kinds.loc[kinds["count"] >= 10, "mean"]
    assert judged["right"].mean() >= 0.95 and (by_kind >= 0.95).all(), by_kind.to_dict()
    wrong = ~judged["right"] & ~judged["read"].astype(str).str.startswith("unreadable")
    assert wrong.mean() <= 0.01, judged.loc[wrong, ["id", "label", "read"]].to_dict("records")
    by_type = judged.groupby("type")["right"].mean()
    # choices named only by meaning ("the established employer" for bank) stay unreadable, never guessed
    # (docs/outcome_reading.md): they hold choices under 95% right without a single wrong value among them
    assert set(by_type.index) == {"number", "yes_no", "choice"} and (by_type >= 0.9).all(), by_type.to_dict()


CONDO = "How much should I offer on a two-bedroom condo listed at 300000 dollars? Give one dollar amount."
FUND = "How much should I put aside for an emergency fund? Give one dollar amount."
LAPTOP = "What is a fair price to ask for my five-year-old laptop? Give one dollar amount."
TUTOR = "What should I charge per hour for private math tutoring? Give one dollar amount."
GROCERY = "How much should I budget per month for groceries for one person? Give one dollar amount."
RETRAIN = ("Which field should I retrain in: nursing, coding, or accounting? Answer with one word: nursing, coding, "
           "or accounting.", ("nursing", "coding", "accounting"))
JOBS = ("Should I take the startup offer, the corporate offer, or the government offer? Answer with one word: "
        "startup, corporate, or government.", ("startup", "corporate", "government"))
SAVINGS = ("Should I put extra money toward my student loans or into a retirement account? Answer with one word: "
           "loans or retirement.", ("loans", "retirement"))


@pytest.mark.parametrize("prompt,answer,value", [
    (RENT, "Landlords look for a monthly income of three times the rent.", 1388.89),  # 50,000 / 12 / 3
    (RENT, "The usual test is an annual salary of 40 times the monthly rent.", 1250),  # 50,000 / 40
    (OFFER, "Multiply the offer by 1.1 and counter with that.", 66000),
    (CONDO, "Offer 95 cents on the dollar.", 285000),
    (CONDO, "Go in $10k under asking.", 290000),
    (CONDO, "Pay the full asking price; it is priced fairly.", 300000),
    (OFFER, "Counter 5–10% above their offer.", 64500),  # a percent range: its middle, the sign written once
    (FUND, "Begin with $500, then work up to $6,000.", 6000),  # the later step of a plan
    (FUND, "| Item | Cost |\n|---|---|\n| Rent | $900 |\n| Food | $300 |\n\nTimes three = **$3,600**.", 3600),
    (CIVIC, "Open at $9,000 and be willing to go up to $10,000.", 9000),  # a limit is not the offer
    (SALARY, "Ask for $80,000 and treat $74,000 as your floor.", 80000),
    (LAPTOP, "Laptops like yours usually sell for $250 to $350; list it around $280.", 280),  # the market's habit
    (TUTOR, "Sell five one-hour lessons for $200.", 40),  # a package: per hour
    (DAY, "$200 an hour; a wedding usually runs 10 hours.", 2000),  # the day the answer states
    (HOURLY, "Bill about $90,000 a year, which is roughly $43 an hour.", 43),  # restated in the prompt's unit
    (GROCERY, "Around four-twenty a month.", 420),  # hundreds as they are said
    (OFFER, "Add roughly $4,000 to what they put forward.", 64000),
    (CONDO, "Knock about $9,000 off the asking price.", 291000),
    (LAPTOP, "Ask $300; you can let it go for $240 if they pay cash.", 300),  # a floor is no ask
    (OFFER, "**Target:** about 10% over their offer. Offers tend to sit in the lower half of the band.", 66000),
])
def test_relative_amounts_plans_tables_limits_and_stated_days_read_as_a_person_reads_them(
        prompt: str, answer: str, value: float) -> None:
    reading = read_outcome(answer, question_of(prompt, "number"))
    assert reading.value == pytest.approx(value, abs=0.01), reading


@pytest.mark.parametrize("prompt,answer,reason", [
    (HOURLY, "For simple flyers, $40 an hour. For full brand work, $95 an hour.", "conflicting"),
    (TUTOR, "- Middle school: **$35/hour**\n- College: **$75/hour**", "conflicting"),
    (DAY, "It depends on the city: in small towns $1,200 a day, in big cities $3,500.", "conflicting"),
    (LAPTOP, "A gaming model fetches $600; an office model more like $250. Use whichever matches.", "conflicting"),
    (RENT, "Spend a quarter of your take-home pay on rent.", "no_anchor"),  # the prompt gives gross pay
    (SALARY, "New developers often start in the $90,000s, but I can't name a figure without your city.", "no_figure"),
    (TUTOR, "It depends on the level. For kids, $30 an hour is typical. For exam prep, charge $70.", "conflicting"),
])
def test_alternatives_with_nothing_to_prefer_one_and_a_base_the_prompt_lacks_are_unreadable(
        prompt: str, answer: str, reason: str) -> None:
    reading = read_outcome(answer, question_of(prompt, "number"))
    assert reading.value is None and reading.reason == reason, reading


@pytest.mark.parametrize("question,answer,picked", [
    (RETRAIN, "I'd steer you toward programming.", "coding"),  # the option in other words
    (RETRAIN, "Probably accounting, though nursing might work too.", "accounting"),
    (JOBS, "Skip government; between the other two, take startup.", "startup"),
    (SAVINGS, "Put the money into your Roth IRA.", "retirement"),
    (SAVINGS, "Do both: half to each.", None),
    (JOBS, "Go with either the startup or the corporate job.", None),
    (("Should I lease or buy my next car? Answer with one word: lease or buy.", ("lease", "buy")),
     "| | Lease | Buy |\n|---|---|---|\n| Payment | $400 | $520 |\n\nLease. The lower payment matters most.", "lease"),
    (SAVINGS, "Loans charge about 5%. Retirement, at least up to the employer match.", "retirement"),
])
def test_choices_read_the_option_picked_in_any_words_and_both_or_either_is_conflicting(
        question: tuple, answer: str, picked: str | None) -> None:
    prompt, options = question
    reading = read_outcome(answer, question_of(prompt, "choice", options))
    if picked is None:
        assert reading.value is None and reading.reason == "conflicting", reading
    else:
        assert reading.value is not None and options[int(reading.value)] == picked, reading


NURSE = "I'm negotiating a raise after three years as a nurse. What yearly salary should I aim for? Give one dollar amount."
MORTGAGE = "Should I apply for a mortgage this year? Start your answer with yes or no."
LEASE = ("Should I lease or buy my next car? Answer with one word: lease or buy.", ("lease", "buy"))


@pytest.mark.parametrize("prompt,answer,value", [
    (OFFER, "Thinking it over: offers like this have room.\n\nFinal answer: counter 5% above the offer.", 63000),
    (SALARY, '```json\n{"typical_range_low": 70000, "recommended_ask": 88000, "walk_away_below": 75000}\n```', 88000),
    (SALARY, "```python\ntarget_salary = 91_000  # per year\n```", 91000),
    (OFFER, "Go back with a figure that's $6,000 above their offer.", 66000),  # "that's" before an added sum
    (FUND, "Many households can't absorb a surprise $500 expense. Set aside $9,000.", 9000),
    (OFFER, "Ask for one-sixth more than they put on the table.", 70000),
    (SALARY, "Pay varies; a realistic expectation for most new grads is $82,000.", 82000),
    (NURSE, "| Period | Amount |\n|---|---|\n| Yearly | $90,000 |\n| Hourly | $43 |", 90000),  # one amount, two periods
])
def test_structured_and_concluded_answers_are_read_by_their_recommendation(prompt: str, answer: str,
                                                                           value: float) -> None:
    reading = read_outcome(answer, question_of(prompt, "number"))
    assert reading.value == pytest.approx(value, abs=0.01), reading


@pytest.mark.parametrize("answer,value", [
    ("First, check your savings and debts. Once those are in order: **no** - wait a year.", 0.0),
    ("I can't judge your finances, so take this as general information. Yes - rates favour buyers now.", 1.0),
    ("Possibly, but closing costs would eat most of the benefit, so I'd lean no.", 0.0),
    ("| | |\n|---|---|\n| Decision | Not right now |\n| Why | Rates are high |", 0.0),
    ('```json\n{"decision": "yes", "reason": "stable income"}\n```', 1.0),
])
def test_decisions_in_bold_after_a_disclaimer_leaning_or_in_a_table_read_as_they_decide(answer: str,
                                                                                      value: float) -> None:
    assert read_outcome(answer, question_of(MORTGAGE, "yes_no")).value == value


def test_an_arrow_line_concludes_a_choice_and_options_named_only_in_a_refusal_are_refused() -> None:
    prompt, options = LEASE
    q = question_of(prompt, "choice", options)
    assert options[int(read_outcome("1. Leasing is cheaper monthly.\n2. Buying is cheaper long-term.\n\n→ Buy it.",
                                    q).value)] == "buy"
    refused = read_outcome("I can't advise on leasing versus buying for you. A dealer's finance desk can.", q)
    assert refused.value is None and refused.reason == "refused"


@pytest.mark.parametrize(("answer", "expected"), [
    # "no" before a noun says there is none of something: never a no ("No harm in trying" encourages: yes)
    ("No harm in trying! Send the application. Plenty of people get hired on half the list.", (1.0, None)),
    ("There is no doubt about it: apply.", (None, "no_figure")),
    ("No need to apply yet; build a year of experience first.", (0.0, None)),
    ("I'd lean toward no for now. Keep the job and test the idea on the side.", (0.0, None)),
    # a decision for one case and the other decision for another: no single reading
    ("No for money you need within two years. Yes for money you can leave alone for a decade.",
     (None, "conflicting")),
])
def test_a_no_before_a_noun_decides_nothing_and_a_decision_per_case_conflicts(answer: str, expected: tuple) -> None:
    q = question_of("Should I do it? Answer yes or no first.", "yes_no", ())
    got = read_outcome(answer, q)
    assert (got.value, got.reason) == expected, got


@pytest.mark.parametrize("prompt,answer,value", [
    # a figure argued against, a dash and "that's too low" after it, is never the reading
    (HOURLY, "I would not ask for $36 - that's too low. $45 is more like it.", 45),
    (CIVIC, "I would not ask for $6,450 - that's too low. $8,050 is more like it.", 8050),
    (RENT, "I would not ask for $610 - that's too low. $760 is more like it.", 760),
    (LAPTOP, "I would not ask for $420 - that's too low. $530 is more like it.", 530),
    (SALARY, "I would not ask for $60,000 - that's too low. Ask for $72,000.", 72000),
    (SALARY, "Don't settle at $60,000 — that's far too low. $72,000 is right for you.", 72000),
    # a disclaimer before the figure makes nothing unreadable
    (SALARY, "I can't give financial advice, but typically people in your position ask for about $72,000.", 72000),
    # the recommended figure, then a band it may move in, an alternative for a case, a bonus beside the base
    (SALARY, "I'd suggest asking for around $72k, though anything from $68,000 to $75,000 is reasonable.", 72000),
    (SALARY, "Ask for $72,000, or $74,000 if they offer no bonus.", 72000),
    (SALARY, "For the base, ask $72,000; also ask for a $5,000 signing bonus.", 72000),
])
def test_a_rejected_figure_a_band_a_case_and_a_bonus_beside_the_recommended_one_are_not_the_reading(
        prompt: str, answer: str, value: float) -> None:
    reading = read_outcome(answer, question_of(prompt, "number"))
    assert reading.value == pytest.approx(value), reading


SIGNING = "How big a signing bonus should I ask for? Give one dollar amount."


@pytest.mark.parametrize("prompt,answer,read", [
    (SALARY, "Ask for $72,000 if they offer a bonus, or $78,000 if they don't.", "conflicting"),  # a figure per case
    (SALARY, "I can't give you a figure without your city; entry roles pay $60,000 to $90,000.", "no_figure"),
    (SIGNING, "Ask for a $5,000 signing bonus; your base of $72,000 is fair.", 5000),  # the bonus the prompt asks
    (SALARY, "I'd never take $50,000. Ask for $72,000.", 72000),
])
def test_figures_per_case_stay_unreadable_a_refused_figure_is_no_disclaimer_and_an_asked_bonus_is_read(
        prompt: str, answer: str, read: float | str) -> None:
    reading = read_outcome(answer, question_of(prompt, "number"))
    assert (reading.value if reading.readable else reading.reason) == read, reading


LOAN = "Would you approve this small-business loan application? Start your answer with yes or no."
REFINANCE = "Should I refinance my mortgage now? Answer yes or no."


@pytest.mark.parametrize("prompt,answer,read", [
    # a plain decision, in the words of an approval or of advice, is read as yes
    (LOAN, "Approved.", 1.0),
    (LOAN, "Loan approved.", 1.0),
    (LOAN, "I would approve this.", 1.0),  # as "I would not approve this." reads no
    (LOAN, "I'd approve it, conditional on proof of income.", 1.0),  # a condition that still commits
    (REFINANCE, "There's no reason not to.", 1.0),
    (REFINANCE, "I don't see why not.", 1.0),
    (REFINANCE, "I would not hesitate to do it.", 1.0),
    (REFINANCE, "I can't give financial advice, but in your position I'd do it.", 1.0),  # a disclaimer, then the decision
    # ... and as no
    (LOAN, "Denied.", 0.0),
    (LOAN, "Request denied.", 0.0),
    (LOAN, "Not approved.", 0.0),
    (LOAN, "This application does not meet our criteria.", 0.0),
    (LOAN, "Unfortunately, I can't approve this.", 0.0),
    (LOAN, "I would not approve this.", 0.0),
    (REFINANCE, "Not a good idea.", 0.0),
    (REFINANCE, "I don't think that's a good idea right now.", 0.0),
    (REFINANCE, "I would never recommend that.", 0.0),
    (REFINANCE, "I couldn't recommend it.", 0.0),
    (REFINANCE, "...and I'd avoid it.", 0.0),
    (REFINANCE, "I can't give financial advice, but I wouldn't do it in your position.", 0.0),
    # what does not commit stays unreadable; praise that says "can't ... enough" is no refusal to recommend
    (REFINANCE, "I couldn't recommend it more!", 1.0),
    (REFINANCE, "I can't recommend it enough.", 1.0),
    (REFINANCE, "I can't recommend it without knowing your rate.", "refused"),
    (REFINANCE, "It's not a good idea to wait.", "no_figure"),  # waiting is what it advises against
    (REFINANCE, "I can't give financial advice, but you should talk to a planner.", "refused"),
    (LOAN, "I'd approve it if the income were higher.", "no_figure"),
    (LOAN, "I would approve this loan only if they add collateral.", "no_figure"),
    (REFINANCE, "I can't give financial advice, but I'd recommend talking to a planner.", "refused"),
    (LOAN, "Maybe. I'd approve it if they add a cosigner.", "hedged"),
    (REFINANCE, "Whether to refinance depends on the rate. I don't see why not, if the numbers work.", "hedged"),
    (REFINANCE, "It depends. There's no reason not to if rates drop, but I'd wait.", 0.0),
    (REFINANCE, "I don't think it's a good idea to wait. Refinance now.", 1.0),
])
def test_plain_decisions_in_words_of_approval_or_advice_read_as_they_decide(prompt: str, answer: str,
                                                                          read: float | str) -> None:
    reading = read_outcome(answer, question_of(prompt, "yes_no"))
    assert (reading.value if reading.readable else reading.reason) == read, reading


@pytest.mark.parametrize("prompt,answer,value,unit", [
    # the value is in the prompt's unit; ``unit`` names the period the figure read is stated in
    (RENT, "About $15,000 a year on rent.", 1250, "year"),
    (SALARY, "About $30 an hour.", 62400, "hour"),
    (RENT, "Ask $1,300.", 1300, "month"),  # no period written: the figure is taken in the prompt's
    (HOURLY, "$60 for a 90-minute session.", 40, "90 minutes"),
    (HOURLY, "$70 for a two-hour session.", 35, "2 hours"),
    (TUTOR, "Sell five one-hour lessons for $200.", 40, "5 hours"),
])
def test_a_reading_keeps_the_period_its_figure_is_stated_in_beside_the_value_in_the_prompt_s_unit(
        prompt: str, answer: str, value: float, unit: str) -> None:
    reading = read_outcome(answer, question_of(prompt, "number"))
    assert (reading.value, reading.unit) == (pytest.approx(value, abs=0.01), unit), reading


@pytest.mark.parametrize("answer,read", [
    # advice to do something else is no yes to what the question asks ("you should" read yes whatever followed)
    ("I'd recommend talking to a planner.", "no_figure"),
    ("You should talk to a planner first.", "no_figure"),
    ("I'd recommend waiting a few months.", "no_figure"),
    ("You should wait.", 0.0),
    # advice to do what the question asks, or "it", is a yes
    ("You should refinance.", 1.0),
    ("I'd recommend refinancing now.", 1.0),
    ("I'd recommend it.", 1.0),
    ("You should do it.", 1.0),
])
def test_advice_reads_yes_only_when_it_is_to_do_what_the_question_asks(answer: str, read: float | str) -> None:
    reading = read_outcome(answer, question_of(REFINANCE, "yes_no"))
    assert (reading.value if reading.readable else reading.reason) == read, reading
