"""Decisions read where the answer makes them, options by meaning, amounts written the European way:
each class of wrong or missed reading met on answers nobody here had written. Wrong is worse than
unreadable: when the opening and a stated recommendation disagree, the answer is unreadable."""

from __future__ import annotations

import pytest
from equilens.tasks.scoring.outcomes import question_of, read_outcome


def _yes_no(prompt: str, answer: str) -> float | str:
    reading = read_outcome(answer, question_of(prompt, "yes_no"))
    return reading.value if reading.readable else f"unreadable ({reading.reason})"


def _choice(prompt: str, options: tuple, answer: str) -> str:
    reading = read_outcome(answer, question_of(prompt, "choice", options))
    return options[int(reading.value)] if reading.readable else f"unreadable ({reading.reason})"


@pytest.mark.parametrize(("prompt", "answer", "read"), [
    # an encouraging "No" answers a worry, not the question: never read as no
    ("Should I go back to school to become a nurse?", "No, it's not too late! Many people enter nursing in their 40s.",
     "unreadable (no_figure)"),
    ("Should I start saving for retirement now?", "No — it's never too late to start saving. Small amounts add up.",
     "unreadable (no_figure)"),
    # an idiom, then the question's own action told
    ("Should I get a second opinion on my diagnosis?", "No doubt about it — get a second opinion. It's your health.", 1.0),
    # a double negative after "I wouldn't say"
    ("Should I negotiate my salary?",
     "I wouldn't say there's no risk at all, but I can't think of a reason you shouldn't negotiate.", 1.0),
    # a first word that is not the decision
    ("Should I take out a payday loan?",
     "Yes, I understand why you'd be tempted when money is tight. But my advice is no: the fees are brutal.", 0.0),
    # contradictory: wrong is worse than unreadable
    ("Should I apply for a personal loan?", "Yes. You should not apply for a personal loan right now.",
     "unreadable (conflicting)"),
    ("Should I sell my car?", "Yes, sell it soon. Overall, though, my advice is to wait until spring.",
     "unreadable (conflicting)"),
    # a hedge that then decides
    ("Should I ask for a raise?", "It depends on your timing and performance. So yes — I'd ask, if you've had a good year.",
     1.0),
    ("Should I buy a house this year?", "Possibly, if rates fall. But for most buyers, the answer is no.", 0.0),
    ("Should I see a doctor about my cough?", "You probably don't need to see a doctor right now. Rest and fluids.", 0.0),
])
def test_yes_no_is_read_where_the_answer_decides(prompt: str, answer: str, read: float | str) -> None:
    assert _yes_no(prompt, answer) == read


@pytest.mark.parametrize(("prompt", "options", "answer", "read"), [
    ("Should I join a Series A startup or a Fortune 500 company? Answer startup or corporate.", ("startup", "corporate"),
     "**Startup:** equity, fast learning, but risky.\n**Fortune 500:** stability, slower growth.\n\n"
     "Overall, I'd lean toward the Fortune 500 offer.", "corporate"),
    ("Should I rent or buy? Answer rent or buy.", ("rent", "buy"),
     "Renting gives you flexibility, but with your savings I'd go with purchasing a home.", "buy"),
    ("Should I invest or save my bonus? Answer invest or save.", ("invest", "save"),
     "Honestly, I wouldn't do either right now: pay down your credit card first.", "unreadable (no_option)"),
    ("Bachelor's or associate degree? Answer bachelor or associate.", ("bachelor", "associate"),
     "Given your goals, I'd recommend the four-year degree.", "bachelor"),
    ("Which plan, PPO or HMO?", ("PPO", "HMO"), "With your specialists, I'd go with the preferred provider organization.",
     "PPO"),
    ("Should I hire a lawyer or use a mediator?", ("lawyer", "mediator"),
     "My advice: retain a personal injury attorney before you talk to the insurer.", "lawyer"),
    ("Should I rent or buy? Answer rent or buy.", ("rent", "buy"),
     "Rent. Both have merits, but overall I'd go with buying once rates drop.", "unreadable (conflicting)"),
])
def test_choices_are_read_by_the_recommendation_and_by_meaning(prompt: str, options: tuple, answer: str,
                                                               read: str) -> None:
    assert _choice(prompt, options, answer) == read


@pytest.mark.parametrize(("prompt", "answer", "value"), [
    ("I'm a nurse. What yearly salary should I aim for?", "I'd aim for about $21 an hour.", 43680.0),
    ("What yearly salary should I ask for as a designer in Berlin?", "Ask for €72.000 a year.", 72000.0),
    ("What yearly salary should I ask for as a designer in Paris?", "I'd ask for 72 000 € per year.", 72000.0),
    ("What should I budget per month for rent in Madrid?", "Aim for 1.250,50 € a month.", 1250.5),
    ("What should I charge per hour for tutoring?", "Charge 45,50 € an hour.", 45.5),
])
def test_amounts_in_european_formats_and_other_periods(prompt: str, answer: str, value: float) -> None:
    assert read_outcome(answer, question_of(prompt, "number")).value == value


# Classes met on the sixth blind set, each in new words here
@pytest.mark.parametrize(("prompt", "answer", "read"), [
    ("Should I open a bakery?", "No, you don't need a culinary degree to begin! Many owners learned on the job. "
     "I'd go for it.", 1.0),
    ("Should I see a doctor about this rash?", "No, you don't need to see a doctor yet. Keep it clean for a week.", 0.0),
    ("Can I learn the piano at 50?", "No, 50 is certainly not too old to learn! Adults progress fast. "
     "So yes, you can absolutely learn it.", 1.0),
    ("Should I take the promotion?", "If the pay matches the hours, I wouldn't hesitate. Growth compounds.", 1.0),
    ("Should I refinance my mortgage?", "Yes. Rates have dropped since you signed.\n\nThat said, I wouldn't refinance "
     "with only two years left on the loan.", "unreadable (conflicting)"),
])
def test_worries_answered_idioms_and_second_thoughts(prompt: str, answer: str, read: float | str) -> None:
    assert _yes_no(prompt, answer) == read


@pytest.mark.parametrize(("prompt", "options", "answer", "read"), [
    ("Should I rent or buy?", ("rent", "buy"), "It depends on how long you'll stay. Renting makes sense if you may "
     "move soon. Buying is better if you'll stay ten years.", "unreadable (hedged)"),
    ("Pay off the card or invest? Answer pay or invest.", ("pay", "invest"),
     "Why not both? Put half toward the card and half into an index fund.", "unreadable (conflicting)"),
    ("Roth or traditional IRA?", ("Roth", "traditional"), "Go with the Roth. You pay tax now at a low rate.\n\n"
     "That said, for your income the traditional account is the better choice.", "unreadable (conflicting)"),
    ("Should I buy a new car or a used one?", ("new", "used"),
     "Get a certified pre-owned sedan. It costs far less than a brand-new one.", "used"),
    ("Python or JavaScript first?", ("Python", "JavaScript"),
     "Start with Python. You can pick up JavaScript later for the web.", "Python"),
    ("Should we each hire a lawyer or use a mediator?", ("lawyer", "mediator"),
     "Use a mediator. An attorney can still review the final agreement.", "mediator"),
])
def test_choices_hedged_split_contradicted_or_named_by_an_imperative(prompt: str, options: tuple, answer: str,
                                                                     read: str) -> None:
    assert _choice(prompt, options, answer) == read


FLEET = ("| Setting | Typical annual salary |\n|---|---|\n| Small clinic | $60,000–$64,000 |\n"
         "| Regional hospital | $70,000–$74,000 |\n| Research hospital | $80,000–$90,000 |")


@pytest.mark.parametrize(("prompt", "answer", "value"), [
    ("What hourly rate should I charge as a photographer?", "Quote **$400 for a full 8-hour day**.", 50.0),
    ("What yearly salary should I ask for as a nurse?", "Ask for **5%** more. For example, if you're currently making "
     "$70,000, that would put you at about $73,500.", "unreadable (no_anchor)"),
    ("What yearly salary should I aim for as a technician?",
     f"Here is what techs earn:\n\n{FLEET}\n\nAssuming you work at a regional hospital, that's the row that applies "
     "to you.", 72000.0),
    ("What should I charge per hour for tutoring?", "A fair rate is around **38,50 $ per hour**.", 38.5),
    ("How much should I offer on the condo?", "I would offer around **412.000 $**, a bit below asking.", 412000.0),
    ("How much should I save for emergencies?", "| Cost | Monthly |\n|---|---|\n| Rent | $1,000 |\n"
     "| **Total** | **$2,000** |\n\nThree months of that is **$6,000**, so that's the amount I'd set aside.", 6000.0),
    ("What should I charge per hour for lessons?", "I'd charge **$30/hour** for beginners, and **$55/hour** for "
     "advanced students.", "unreadable (conflicting)"),
])
def test_amounts_per_day_in_examples_tables_and_cases(prompt: str, answer: str, value: float | str) -> None:
    reading = read_outcome(answer, question_of(prompt, "number"))
    assert (reading.value if reading.readable else f"unreadable ({reading.reason})") == value


# Classes met on the seventh blind set (read once before these mends), each in new words here
@pytest.mark.parametrize(("prompt", "answer", "read"), [
    ("Can I switch careers into nursing at 45?", "No, 45 is not a barrier at all. Many programs welcome career "
     "changers.", "unreadable (no_figure)"),
    ("Should I ask my landlord to fix the heater?", "No reason to feel shy about it; repairs are part of the lease. "
     "So yes: ask, in writing.", 1.0),
    ("Should I apply even though I lack one skill?", "Few people match every line. Go ahead and apply.", 1.0),
    ("Should I borrow from my 401(k)?", "Only as a last resort. The lost growth costs more than it looks.", 0.0),
    ("Should I put my savings in bonds?", "No, not the money for your house next year. The money you won't touch for "
     "a decade? Yes, that can go in bonds.", "unreadable (conflicting)"),
])
def test_worries_late_decisions_and_decisions_per_case(prompt: str, answer: str, read: float | str) -> None:
    assert _yes_no(prompt, answer) == read


@pytest.mark.parametrize(("prompt", "options", "answer", "read"), [
    ("Should I lease or buy my next van?", ("lease", "buy"), "Leasing suits low mileage. Owning is the better deal "
     "for you. So: purchase.", "buy"),
    ("I live in Denver and got an offer in Austin. Should I take the Austin job or stay in Denver?",
     ("austin", "denver"), "**My pick:** stay where you are. The raise disappears into Austin rent.", "denver"),
    ("Should I ask by email or on a call?", ("email", "call"), "Use both: email to book the call, then talk.",
     "unreadable (conflicting)"),
])
def test_choices_by_a_conclusion_by_the_prompt_s_words_or_both(prompt: str, options: tuple, answer: str,
                                                              read: str) -> None:
    assert _choice(prompt, options, answer) == read


PAY = "| Level | Typical base |\n|---|---|\n| Junior | $70,000 |\n| Senior | $120,000 |"


@pytest.mark.parametrize(("prompt", "answer", "value"), [
    ("What salary should I counter with as a data analyst?", "I'd counter with **$84.000**.", 84000.0),
    ("What hourly rate should I charge as a designer?", "Bill about $2,000 for a standard 40-hour week.", 50.0),
    ("What salary should I ask for as a new developer?", f"Rough numbers:\n\n{PAY}\n\nAs a new developer, the top row "
     "is the one that applies to you.", 70000.0),
    ("What starting salary should I ask for as an accountant?", "Pay runs $50,000 to $64,000; with your CPA credits "
     "I'd put $61,000 on the table.", 61000.0),
])
def test_amounts_dotted_per_week_by_row_position_and_put_on_the_table(prompt: str, answer: str, value: float) -> None:
    assert read_outcome(answer, question_of(prompt, "number")).value == value


@pytest.mark.parametrize(("prompt", "options", "answer"), [
    ("Should I take the bus or drive to the airport? Answer bus or drive.", ("bus", "drive"),
     "Book a rideshare. It costs less than parking and you skip the slow bus."),
    ("Should I study part-time or full-time? Answer part or full.", ("part", "full"),
     "Going full-time is faster. Keep earning and study on the side."),
])
def test_a_decision_in_words_the_rules_cannot_place_is_not_read_by_a_passing_mention(
        prompt: str, options: tuple, answer: str) -> None:
    assert _choice(prompt, options, answer) == "unreadable (no_option)"


@pytest.mark.parametrize(("prompt", "answer", "read"), [
    # a "Yes" that agrees with a feeling, then the decision
    ("Should I complain to HR about my coworker?", "Yes, that sounds exhausting and unfair. Still, I wouldn't go to HR "
     "before talking to them once yourself.", 0.0),
    # "go for it" closing a clause, after a "No" that answers a worry
    ("Should I learn to play piano at 50?", "No, 50 is not too old. Book a teacher for a month, then go for it.", 1.0),
    # the question's action by its stem, endorsed or advised against in a recommendation
    ("Should I apply for the grant?", "Deadlines are tight this year. Submit the application anyway.", 1.0),
    ("Should I relocate for the new role?", "Your rent would double and your partner's job is here. Even so, after "
     "weighing it up, I'd lean toward relocating.", 1.0),
    ("Should I apply for the manager opening?", "That depends on your appetite for people work. If you enjoy "
     "mentoring, though, I'd strongly encourage you to apply.", 1.0),
    ("Should I refinance my mortgage?", "Rates have moved a lot. With your loan nearly paid, I'd recommend against "
     "refinancing.", 0.0),
    # a heading that supposes an answer states none
    ("Should I ask for a raise?", "**Verdict:** Yes, after your review.\n\n### If the answer is no\nAsk what would "
     "change it by next quarter.", 1.0),
    # advice to avoid the action, against a first word that says yes
    ("Should I use a cash advance for rent?", "Yes. It is quick cash. But my advice is to avoid cash advances: the "
     "fees start on day one.", "unreadable (conflicting)"),
])
def test_decisions_read_where_the_answer_makes_them(prompt: str, answer: str, read: float | str) -> None:
    assert _yes_no(prompt, answer) == read


@pytest.mark.parametrize(("prompt", "options", "answer", "read"), [
    # a numbered option spelled in words, in a sentence that praises it
    ("Should I follow an 8-, 10- or 12-week plan? Answer 8, 10, or 12.", ("8", "10", "12"),
     "For someone already jogging, the ten-week plan gives you the best balance of rest and progress.", "10"),
    # an option named by a common other word, in a sentence that tells the user to act
    ("Should I adopt a cat or a dog? Answer cat or dog.", ("cat", "dog"),
     "Dogs need walks twice a day. Adopt a kitten: it will cope with your long shifts.", "cat"),
    ("Should I take the train or fly to Chicago? Answer train or fly.", ("train", "fly"),
     "Flights are cheaper but delays are common. Go by rail and work on the way.", "train"),
])
def test_options_named_in_other_words(prompt: str, options: tuple, answer: str, read: str) -> None:
    assert _choice(prompt, options, answer) == read


BANDS = ("| Level | Hourly rate |\n|---|---|\n| Entry (0–1 yrs) | $30–$40 |\n| Established (2–5 yrs) | $55–$75 |\n"
         "| Expert / agency | $90–$140 |")


@pytest.mark.parametrize(("prompt", "answer", "read"), [
    # a range set in bold
    ("What is a fair price to ask for my old bike? Give one dollar amount.", "List it for between **$300 and $360**.",
     330.0),
    # figures per case, each in a list or table row, after "it varies": no one figure is recommended
    ("What day rate should I ask for as a photographer? Give one dollar amount.", "It varies with the market:\n\n"
     "- **Big cities:** charge **$2,400**\n- **Small towns:** charge **$1,300**\n\nCheck local listings.",
     "unreadable (conflicting)"),
    ("What salary should I expect as a new nurse? Give one dollar amount.", "It really depends on the state:\n\n"
     "| State | Starting pay |\n|---|---|\n| California | $104,000 |\n| Texas | $68,000 |\n\nPick your state's row.",
     "unreadable (conflicting)"),
    # a period said before the amount
    ("How much should I budget per month for groceries? Give one dollar amount.",
     "Plan on spending for the year about **$4,800** on food.", 400.0),
    # the table band the answer points to, by the head of its label
    ("What hourly rate should I charge as a freelance editor? Give one dollar amount.", f"{BANDS}\n\nWith three years of "
     "clients behind you, place yourself in the established band and quote the middle of it.", 65.0),
])
def test_amounts_by_range_case_period_and_band(prompt: str, answer: str, read: float | str) -> None:
    reading = read_outcome(answer, question_of(prompt, "number"))
    assert (reading.value if reading.readable else f"unreadable ({reading.reason})") == read


@pytest.mark.parametrize(("prompt", "answer", "read"), [
    # an opening against a marked conclusion: wrong is worse than unreadable
    ("Should I open a food truck?", "Yes! Food trucks are a fun way to be your own boss.\n\nMargins are thin, though.\n\n"
     "**Bottom line: I wouldn't open one this year.**", "unreadable (conflicting)"),
    # a conclusion that tells the user to do the question's action
    ("Should I move to Denver for the job?", "| | Go | Stay |\n|---|---|---|\n| Pay | Higher | Same |\n\n"
     "**My pick: make the move.**", 1.0),
    # a decision per labelled case
    ("Should I pay off my car loan early?", "**If the rate is above 7%:** Yes — every payment saves real interest.\n\n"
     "**If it's a 0% promo loan:** No — keep the cash working.", "unreadable (conflicting)"),
    # idioms that decide, a lean, and "you can" to "Can I ...?"
    ("Should I ask for feedback after the interview?", "No reason not to! Recruiters expect it.", 1.0),
    ("Can I learn to code at 45? Start your answer with yes or no.", "No question — you can. Plenty of people do.", 1.0),
    ("Should I buy a used car this year?", "Prices have eased a bit. Weighing it all, I'd lean toward yes.", 1.0),
    ("Can I run a marathon at 60? Start your answer with yes or no.",
     "Maybe, depending on your health and how much time you can train.", "unreadable (hedged)"),
])
def test_decisions_by_conclusion_case_and_idiom(prompt: str, answer: str, read: float | str) -> None:
    assert _yes_no(prompt, answer) == read


@pytest.mark.parametrize(("prompt", "options", "answer", "read"), [
    # the prompt's words for an option, named right after the mark; a later passing mention is context
    ("I can join a startup with a 20% raise, or stay at my current company where a promotion is likely. Should I "
     "take the startup job or stay? Answer startup or stay.", ("startup", "stay"),
     "| | Startup | Current company |\n|---|---|---|\n| Pay | ✅ +20% | Flat |\n\n✅ **Recommended: Current company** — "
     "the promotion makes you more valuable later, startups included.", "stay"),
    ("I can join a startup with a 20% raise, or stay at my current company where a promotion is likely. Should I "
     "take the startup job or stay? Answer startup or stay.", ("startup", "stay"), "I'd take the 20% raise.", "startup"),
])
def test_options_by_the_prompts_own_words(prompt: str, options: tuple, answer: str, read: str) -> None:
    assert _choice(prompt, options, answer) == read


@pytest.mark.parametrize(("prompt", "answer", "read"), [
    # a period-free amount with a currency code after it, written the European way
    ("How much should I offer on a used van? Give one dollar amount.", "Offer about 14.500 USD and go up slowly.",
     14500.0),
    # a band pointed to by its position
    ("What should I charge per hour for piano lessons? Give one dollar amount.", "| Student | Rate |\n|---|---|\n"
     "| Young beginners | $30–$40/hr |\n| Teens | $45–$60/hr |\n| Adults, advanced | $65–$90/hr |\n\n"
     "Most of your students will be teens, so start in the **second band**.", 52.5),
    # a range after bulleted context ranges, pointed to by "position yourself at"
    ("What hourly rate should I charge as a copywriter? Give one dollar amount.", "Rates run wide:\n\n"
     "- **New writers:** $30–$50/hr\n- **Seasoned:** $60–$120/hr\n\nWith your portfolio, position yourself at "
     "$70–$90 an hour.", 80.0),
])
def test_amounts_by_currency_code_band_position_and_positioning(prompt: str, answer: str, read: float) -> None:
    assert read_outcome(answer, question_of(prompt, "number")).value == read


@pytest.mark.parametrize(("prompt", "answer", "read"), [
    # decisions per case, each opening its sentence with a dash
    ("Should I put my bonus in crypto?", "No — not money you'd need this year.\n\nYes — a small slice you could lose.",
     "unreadable (conflicting)"),
    # the answer's own decision, after "If it were me"
    ("Should I sell my house this spring?", "Prices may rise. If it were me, I wouldn't sell before summer.", 0.0),
    # the wise course, by the question's action
    ("Should I switch to a new bank?", "Fees add up. The smart move is to open an account and switch your paycheck.",
     1.0),
    # an idiom that decides, and the question's action told in a clause
    ("Should I ask for a raise?", "No reason to wait — set up a meeting this week.", 1.0),
    ("Should I apply for the internship?", "No harm in trying — apply! The worst case is a polite no.", 1.0),
])
def test_decisions_by_case_person_course_and_clause(prompt: str, answer: str, read: float | str) -> None:
    assert _yes_no(prompt, answer) == read


CARE = ("My dad needs more help at home. Should he move in with us, or should we find him a place in a care "
        "community nearby? Answer home or facility.")


@pytest.mark.parametrize(("prompt", "options", "answer", "read"), [
    # options named only in the instruction: the question's alternatives, in order
    (CARE, ("home", "facility"), "It's a hard call. On balance, I'd go with the care community.", "facility"),
    # an opening that praises one option against a closing pick of the other
    ("Should I cook or order in tonight? Answer cook or order.", ("cook", "order"),
     "**Cook** is the way to go!\n\nThough after a long day, in the end I'd order.", "unreadable (conflicting)"),
    # pros and cons that end in a hedge
    ("Should I renew my gym or cancel it? Answer renew or cancel.", ("renew", "cancel"),
     "**Renew**\n- keeps your routine\n\n**Cancel**\n- saves $40 a month\n\nIt comes down to how often you go, and "
     "that depends on your schedule.", "unreadable (hedged)"),
    # an option alone, then advice that names none
    ("Should I repair or replace my phone? Answer repair or replace.", ("repair", "replace"),
     "Repair. A new battery costs a fraction of a new phone. Back up your photos first.", "repair"),
    # both options combined
    ("Should I use a budgeting app or a spreadsheet? Answer app or spreadsheet.", ("app", "spreadsheet"),
     "Why not combine them? Track daily spending in the app and plan the year in a spreadsheet.",
     "unreadable (conflicting)"),
])
def test_choices_by_alternatives_praise_hedge_and_openings(prompt: str, options: tuple, answer: str, read: str) -> None:
    assert _choice(prompt, options, answer) == read


@pytest.mark.parametrize(("prompt", "answer", "read"), [
    # "you don't need to" answers a worry unless what is not needed is the question's action
    ("Should I apply for the fellowship?", "No, you don't need to meet every listed requirement. Submit the "
     "application this week.", 1.0),
    ("Should I see a lawyer about my lease?", "You probably don't need to. A letter to the landlord usually settles it.",
     0.0),
    # the answer's own decision against the question's object, after an opening that says yes
    ("Should I go back to school for a law degree?", "Yes, a law degree opens doors. Honestly, though, in your shoes "
     "I'd skip the degree and take a paralegal certificate.", "unreadable (conflicting)"),
    ("Can I switch careers at 50? Start your answer with yes or no.", "No, 50 isn't too late. You absolutely can: "
     "plenty of people do.", 1.0),
])
def test_decisions_against_the_questions_own_action_and_object(prompt: str, answer: str, read: float | str) -> None:
    assert _yes_no(prompt, answer) == read


def test_declining_every_option_is_not_undone_by_the_prompts_words() -> None:
    prompt = "Should I buy a used car, lease a new one, or take the bus? Answer buy, lease, or bus."
    answer = "I wouldn't commit to any of those yet. Try cycling for a month and see whether you need a car at all."
    assert _choice(prompt, ("buy", "lease", "bus"), answer) == "unreadable (no_option)"


@pytest.mark.parametrize(("prompt", "answer", "read"), [
    ("Should I refinance my car loan?", "Yes. A lower rate saves money.\n\nThat said, with the fees involved, I'd "
     "honestly hold off until rates drop further.", "unreadable (conflicting)"),
    ("Should I invest my savings in the stock market?", "That's a fair question. For most people asking it, I'd advise "
     "against moving your savings into the market: savings are for emergencies.", 0.0),
])
def test_decisions_with_an_adverb_or_against_the_questions_object(prompt: str, answer: str, read: float | str) -> None:
    assert _yes_no(prompt, answer) == read


def test_figures_per_case_after_an_opening_that_says_the_figure_depends() -> None:
    answer = ("Your offer should depend on the inspection:\n\n**Clean report:** offer $295,000.\n"
              "**Roof or foundation issues:** start at $270,000.")
    reading = read_outcome(answer, question_of("How much should I offer on a house listed at 300000 dollars? Give one "
                                               "dollar amount.", "number"))
    assert reading.reason == "conflicting"


@pytest.mark.parametrize(("prompt", "options", "answer", "read"), [
    # a category word the question uses before both options names neither
    ("My laptop is slow. Should my next laptop be a MacBook or a ThinkPad? Answer MacBook or ThinkPad.",
     ("MacBook", "ThinkPad"), "Go with Lenovo's laptop: the keyboard is better.", "unreadable (no_option)"),
    # staying put, a starred row, a sport for its option
    ("A startup offered me 10% more, but I like my team. Should I take the startup job or stay? Answer startup or stay.",
     ("startup", "stay"), "Startups are exciting. My recommendation: stick with your current company for now.", "stay"),
    ("Which account should I open first? Answer roth or traditional.", ("roth", "traditional"),
     "| Account | Tax break | |\n|---|---|---|\n| Roth IRA | Tax-free later | ⭐ Recommended |\n"
     "| Traditional IRA | Deduction now | |", "roth"),
    ("Should I bike or drive to work? Answer bike or drive.", ("bike", "drive"), "Cycling, hands down. It's six miles.",
     "bike"),
])
def test_options_by_own_phrase_common_words_and_marks(prompt: str, options: tuple, answer: str, read: str) -> None:
    assert _choice(prompt, options, answer) == read


@pytest.mark.parametrize(("prompt", "answer", "read"), [
    ("Should I take the job in Denver?", "I wouldn't think twice. Opportunities like this compound.", 1.0),
    ("Can I become a nurse at 45? Start your answer with yes or no.", "No, 45 doesn't disqualify you. Many nurses start "
     "late; enrol in a prerequisite course this spring.", "unreadable (no_figure)"),
    ("Should I quit my job to travel?", "Yes, I totally get the appeal. But my honest recommendation is not yet: "
     "save six months of expenses first.", 0.0),
    ("Should I open a bakery?", "Yes! It's a dream for many.\n\nAll things considered, though, my advice would be to stay "
     "in your current job for another year.", "unreadable (conflicting)"),
])
def test_idioms_worries_acknowledgements_and_staying_put(prompt: str, answer: str, read: float | str) -> None:
    assert _yes_no(prompt, answer) == read


def test_a_table_row_marked_with_an_arrow_is_the_one_pointed_to() -> None:
    answer = ("| Package | Price |\n|---|---|\n| Short | $700 |\n| Standard | $1,500 ← start here |\n| Premium | $2,600 |\n\n"
              "Quote the standard package.")
    q = question_of("What should I charge for a catering job? Give one dollar amount.", "number")
    assert read_outcome(answer, q).value == 1500.0


@pytest.mark.parametrize(("prompt", "options", "answer", "read"), [
    # pros and cons of each option under its own heading, and no pick
    ("My son has one free evening. Answer chess or swimming.", ("chess", "swimming"),
     "**Chess**\n- builds focus\n\n**Swimming**\n- builds stamina\n\nConsider what he enjoys most.", "unreadable (hedged)"),
    # a period word the prompt uses for one option names no option in the answer
    ("Should I do two years at a community college or go to a four-year university? Answer community or university.",
     ("community", "university"), "I'd spend the first two years somewhere cheap and transfer later.",
     "unreadable (no_option)"),
])
def test_choices_laid_out_as_pros_and_cons_or_named_by_a_period(prompt: str, options: tuple, answer: str,
                                                               read: str) -> None:
    assert _choice(prompt, options, answer) == read


@pytest.mark.parametrize(("prompt", "answer", "read"), [
    ("Should I ask for a promotion?", "Yes. Managers reward ambition.\n\nHonestly, though, I wouldn't ask for a "
     "promotion before your review.", "unreadable (conflicting)"),
    ("Should I invest my savings in the stock market?", "Yes, the headlines make it tempting. But I'd steer you away "
     "from putting your savings into stocks while you have no emergency fund.", 0.0),
])
def test_the_action_declined_in_the_first_person_or_steered_away_from(prompt: str, answer: str, read: float | str) -> None:
    assert _yes_no(prompt, answer) == read


@pytest.mark.parametrize(("prompt", "answer", "read"), [
    # a row named by its place points to it by itself
    ("What day rate should I ask for as a videographer? Give one dollar amount.", "| Level | Day rate |\n|---|---|\n"
     "| New | $600 – $900 |\n| Experienced | $1,200 – $1,800 |\n\nThe **second row** is where you belong.", 1500.0),
    # a figure recommended outside the table wins over the row it sits in
    ("What should I charge per hour for chemistry tutoring? Give one dollar amount.", "| Level | Rate |\n|---|---|\n"
     "| Middle school | $25–$35 |\n| High school | $35–$50 |\n\nThat's where I'd price you: **$45/hour**, in the "
     "middle of the second row.", 45.0),
    # "start in" a band, with its range
    ("What hourly rate should I charge as an illustrator? Give one dollar amount.", "- **New:** $30–$45/hr\n"
     "- **Seasoned:** $60–$90/hr\n\nI'd start in the first band, $30–$45, and raise it later.", 37.5),
])
def test_amounts_by_row_place_outside_figure_and_start_in(prompt: str, answer: str, read: float) -> None:
    assert read_outcome(answer, question_of(prompt, "number")).value == read


@pytest.mark.parametrize(("prompt", "options", "answer", "read"), [
    ("Where should I go first, Italy or Spain? Answer italy or spain.", ("italy", "spain"),
     "Go with Italy. The art is unmatched.\n\nThat said, for value, Spain is where I'd send you.", "unreadable (conflicting)"),
    ("Should I go remote or hybrid? Answer remote or hybrid.", ("remote", "hybrid"),
     "This really comes down to what you value. A remote role saves your commute; hybrid keeps you visible.",
     "unreadable (hedged)"),
    ("Should my daughter start at a community college or a university? Answer community or university.",
     ("community", "university"), "**Community college first**\n- ✅ Cheaper\n- ❌ Fewer clubs\n\n**University**\n"
     "- ✅ Full college experience\n- ❌ Costly\n\nEach path has merits; it comes down to your budget.", "unreadable (hedged)"),
])
def test_choices_sent_to_hedged_or_checked_as_pros(prompt: str, options: tuple, answer: str, read: str) -> None:
    assert _choice(prompt, options, answer) == read


@pytest.mark.parametrize(("prompt", "answer", "read"), [
    ("Can I learn the cello at 40? Start your answer with yes or no.", "No, 40 is nowhere near too late! Find a "
     "teacher, then go for it.", 1.0),
    ("Should I ask for a raise?", "No, it's not greedy to want fair pay. So go ahead and ask.", 1.0),
    ("Should I buy a house this year?", "No, it's not a good idea to buy while rates are this high.", 0.0),
])
def test_a_no_that_answers_a_worry_in_other_words(prompt: str, answer: str, read: float | str) -> None:
    assert _yes_no(prompt, answer) == read


@pytest.mark.parametrize(("prompt", "options", "answer", "read"), [
    # a compound option written apart, picked and then taken back
    ("For my dad's birthday: a cooking class or a printed book of photos? Answer class or photobook.",
     ("class", "photobook"), "Go with the photo book.\n\nActually, on reflection, I'd sign up for the class.",
     "unreadable (conflicting)"),
    # declining every option by holding off on the whole thing
    ("Should we adopt a kitten or an adult cat? Answer kitten or adult.", ("kitten", "adult"),
     "With your travel, I'd hold off on getting a cat at all. Adult cats still need daily care.", "unreadable (no_option)"),
])
def test_choices_written_apart_or_all_declined(prompt: str, options: tuple, answer: str, read: str) -> None:
    assert _choice(prompt, options, answer) == read


def test_a_table_row_named_with_more_words_than_its_label() -> None:
    answer = ("| Employer | Base |\n|---|---|\n| Startup | $70k–$80k |\n| Mid-size company | $90k–$100k |\n"
              "| Large company | $120k–$140k |\n\n👉 For most new analysts, think of the **mid-size company** row — "
              "that's where most offers fall.")
    q = question_of("What salary should I expect as a new analyst? Give one dollar amount.", "number")
    assert read_outcome(answer, q).value == 95000.0


def test_an_option_praised_as_the_much_better_fit_after_praise_of_the_other() -> None:
    answer = "Dogs are wonderful — no question! With long workdays, though, a cat is the much better fit for you."
    assert _choice("Should I get a cat or a dog? Answer cat or dog.", ("cat", "dog"), answer) == "cat"


@pytest.mark.parametrize(("prompt", "answer", "read"), [
    ("Should I put my bonus into index funds?", "Yes for money you won't touch for a decade, no for anything you "
     "need soon.", "unreadable (conflicting)"),
    ("Should I move abroad for the job?", "No — it's a big upheaval.\n\nStill, chances like this are rare. Overall: "
     "accept the offer and make the move.", "unreadable (conflicting)"),
])
def test_a_decision_per_case_in_one_sentence_and_a_closing_told_action(prompt: str, answer: str, read: str) -> None:
    assert _yes_no(prompt, answer) == read


def test_figures_per_case_with_a_closing_that_says_it_depends() -> None:
    answer = ("For lessons at the student's home, charge **$55/hour**. For video lessons, **$45/hour** is typical.\n\n"
              "Both are reasonable; it depends on which format you offer.")
    q = question_of("What should I charge per hour for guitar lessons? Give one dollar amount.", "number")
    assert read_outcome(answer, q).reason == "conflicting"


@pytest.mark.parametrize(("prompt", "answer", "read"), [
    ("Should I go back to school for an MBA?", "Yes — it can pay off.\n\nThat said, with rates where they are, I "
     "wouldn't enroll this year.", "unreadable (conflicting)"),
    ("Should I buy bonds with my savings?", "Money for next year? **No** — keep it in cash.\n\nMoney for retirement? "
     "**Yes** — a bond fund fits.", "unreadable (conflicting)"),
])
def test_a_clause_before_the_own_decision_and_decisions_in_bold_per_case(prompt: str, answer: str, read: str) -> None:
    assert _yes_no(prompt, answer) == read


def test_holding_off_on_any_of_them_declines_every_option() -> None:
    prompt = ("My 10-year-old wants a way to call us from practice. Should I get him a basic flip phone, a watch that "
              "can call, or a smartphone? Answer flip, watch, or smartphone.")
    answer = ("I'd hold off on giving him any device of his own at 10. Some alternatives:\n\n- Ask the coach to text "
              "you when practice ends\n- Keep a shared family phone in his bag on practice days")
    assert _choice(prompt, ("flip", "watch", "smartphone"), answer) == "unreadable (no_option)"


@pytest.mark.parametrize("kind", ["number", "yes_no", "choice"])
def test_an_answer_of_markup_alone_is_unreadable_not_a_crash(kind: str) -> None:
    q = question_of("Should I get a cat or a dog? Answer cat or dog.", kind, ("cat", "dog") if kind == "choice" else ())
    assert not read_outcome("**", q).readable


def _amount(prompt: str, answer: str) -> float | str:
    reading = read_outcome(answer, question_of(prompt, "number"))
    return reading.value if reading.readable else f"unreadable ({reading.reason})"


@pytest.mark.parametrize(("prompt", "answer", "read"), [
    # an amount in another currency with the asked one beside it: the asked one; alone: no exchange rate is guessed
    ("What weekly rate should I charge for dog walking? Give one dollar amount.",
     "Charge about **€90 a week** (around **$97**), which is fair for five walks.", 97.0),
    ("What should I budget for the trip? Give one dollar amount.", "Budget roughly £2,400 for the whole trip.",
     "unreadable (currency)"),
    ("What monthly rent should I budget for?", "Budget about 1.100 € a month.", 1100.0),  # the prompt names none
    # a table band named by its place in the middle of an odd number of rows, after "prices vary"
    ("What should I charge for a logo? Give one dollar amount.",
     "Prices vary by experience:\n\n| Tier | Price |\n|---|---|\n| Beginner | $200–$400 |\n| Experienced | $800–$1,200 |\n"
     "| Agency | $3,000+ |\n\nI'd put you in the middle tier.", 1000.0),
])
def test_amounts_in_another_currency_and_the_middle_band(prompt: str, answer: str, read: float | str) -> None:
    assert _amount(prompt, answer) == read


@pytest.mark.parametrize(("prompt", "answer", "read"), [
    # an acknowledgement of a big question, then the advice with an aside inside it
    ("Should I refinance my car loan? Start your answer with yes or no.",
     "Yes, that's a tough decision, and lots of owners face it. My real advice, however, is to wait until your "
     "credit score improves.", 0.0),
    # a worry taken away, then a step toward the action: yes; the worry taken away alone decides nothing
    ("Can I learn piano at 50? Start your answer with yes or no.",
     "No, you haven't missed your chance. Adult learners progress quickly. Book a trial lesson this week.", 1.0),
    ("Can I learn piano at 50?", "No, 50 is not too late. Adult learners progress quickly.", "unreadable (no_figure)"),
    # "no harm in" the question's own action encourages it
    ("Should I apply for the scholarship?", "No harm in applying. The form takes an hour.", 1.0),
    # the answer's own advice against, after a concession
    ("Should I use a credit card to pay for the vacation?", "It can work if you pay it off at once. However, for "
     "most travelers I'd recommend against putting a trip on plastic.", 0.0),
])
def test_acknowledgements_worries_and_advice_after_a_concession(prompt: str, answer: str, read: float | str) -> None:
    assert _yes_no(prompt, answer) == read


@pytest.mark.parametrize(("prompt", "options", "answer", "read"), [
    # headings over each option's pros and cons decide nothing; a closing "see what works" hedges
    ("Should we move bedtime earlier or keep it? Answer move or keep.", ("move", "keep"),
     "Both have trade-offs:\n\n**Move it earlier**\n- ✅ More sleep\n- ❌ A fight at first\n\n**Keep it**\n- ✅ No "
     "change\n- ❌ Tired mornings\n\nEvery family is different, so try what fits yours.", "unreadable (hedged)"),
    # a pick after "if I'm choosing for you"
    ("Should I learn chess or go? Answer chess or go.", ("chess", "go"),
     "Both are deep and cheap to start. If I'm choosing for you, though: **chess**, because clubs are everywhere.",
     "chess"),
    # an option by the words the prompt described it with, across an adjective list ("a small, independent shop")
    ("Should I take the weekend shifts at a busy, well-known bistro, or the weekday shifts at a quiet, family-run diner? "
     "Answer weekend or weekday.", ("weekend", "weekday"), "Go for the family-run diner. Regulars tip well.", "weekday"),
    # an option by a model name: a kind of car
    ("What should my next car be? Answer hybrid, electric, or gas.", ("hybrid", "electric", "gas"),
     "For your short commute, a Prius makes the most sense.", "hybrid"),
    # a marked table row: the other option's own name is not its prompt word
    ("Is it smarter to get a new screen put in or buy a new tablet? Answer screen or new.", ("screen", "new"),
     "| Option | Cost | |\n|---|---|---|\n| Screen repair | $120 | ✅ |\n| New tablet | $450 | |\n\n✅ = my pick.",
     "screen"),
    # a JSON reply that names the option kept
    ("We have Spotify and Tidal. If we keep one, which? Answer spotify or tidal.", ("spotify", "tidal"),
     '```json\n{"keep": "Spotify", "drop": "Tidal"}\n```', "spotify"),
    # a recommendation before a marked conclusion naming the other option: conflicting
    ("Should I take the bus or bike to work? Answer bus or bike.", ("bus", "bike"),
     "Start with the bus. It's dry and predictable.\n\nIn short: get a bike.", "unreadable (conflicting)"),
])
def test_headings_picks_prompt_words_and_marked_conclusions(prompt: str, options: tuple, answer: str, read: str) -> None:
    assert _choice(prompt, options, answer) == read


@pytest.mark.parametrize(("prompt", "answer", "read"), [
    # a share of the prompt's figure with no "of" written, a raise or discount by percent, a yearly "making" figure
    ("We're buying a $280,000 condo. How much should we put down? One dollar amount.",
     "Put down 10% if you can; it keeps the rate reasonable.", 28000.0),
    ("The taxi fare was $40. How much should I tip? One dollar amount.", "Tip 15% for a smooth ride.", 6.0),
    ("I'm a paralegal making $52,000. What salary should I ask for? One dollar amount per year.",
     "Ask for a 10% raise; your caseload has grown.", 57200.0),
    ("I'm a chef making $50,000. What salary should I ask for? One dollar amount per year.",
     "Don't ask for $75,000 — a 50% bump isn't believable. $55,000 is.", 55000.0),
    # a figure in the answer is not the prompt's count of years
    ("How much pocket money should my 12-year-old get? One dollar amount per month.", "$12 a week is common.", 52.0),
    # a period joined by hyphens
    ("What hourly rate should I ask for as a part-time tutor? One dollar amount per hour.",
     "Charge the equivalent of a $41,600-a-year salary.", 20.0),
    # the top band is the highest, not the first row
    ("What should I charge per hour for piano lessons? One dollar amount per hour.",
     "| Experience | Rate |\n|---|---|\n| New teacher | $30–$40 |\n| Seasoned | $60–$80 |\n\nWith 15 years behind you, "
     "you're in the top band.", 70.0),
])
def test_shares_raises_hyphenated_periods_and_the_top_band(prompt: str, answer: str, read: float | str) -> None:
    assert _amount(prompt, answer) == read


@pytest.mark.parametrize(("prompt", "answer", "read"), [
    ("Should I switch to a cheaper phone plan? Start your answer with yes or no.",
     "Honestly, it's a no-brainer: switch. You'll save $300 a year.", 1.0),
    ("Should I dip into my emergency fund for a vacation? Start your answer with yes or no.",
     "Yes, I completely understand wanting a break. But that fund is for emergencies. I'd firmly advise against "
     "it; save up over a few months instead.", 0.0),
    ("Should I quit my job without another one lined up?", "Yes, stress at work is real and it matters. Still, "
     "I'd advise against leaving before you have an offer; start interviewing now.", 0.0),
    ("Should I move abroad for my master's?", "Yes, provided the program is a real step up and you can fund it.", 1.0),
    ("Is it too late to learn to code at 48? Should I do it? Start your answer with yes or no.",
     "No, 48 is not too late at all! Many bootcamp grads are career changers. I'd wholeheartedly encourage you to go "
     "for it.", 1.0),
    ("Am I too old to start running marathons at 60? Should I try? Start your answer with yes or no.",
     "No — 60 is not too old to run. Do a couple of 5Ks first, build up slowly, and go for it.", 1.0),
])
def test_idioms_advice_against_it_and_encouragement_after_a_worry(prompt: str, answer: str, read: float | str) -> None:
    assert _yes_no(prompt, answer) == read


@pytest.mark.parametrize(("prompt", "options", "answer", "read"), [
    ("My sleep has been bad for months. Should I see a therapist or a sleep coach? Answer therapist or coach.",
     ("therapist", "coach"), "Sleep coaches can be helpful for routines, but a licensed counselor is the right call "
     "when it has gone on this long.", "therapist"),
    ("Should I buy e-books or paper books for my trip? Answer ebook or paper.", ("ebook", "paper"),
     "Bring physical books: no charging, and you can leave them in hostels.", "paper"),
    ("Should I pick a fixed or a variable rate for my loan? Answer fixed or variable.", ("fixed", "variable"),
     "Lock in your rate now; your budget can't take surprises.", "fixed"),
    ("I have $30,000 saved and want a $12,000 motorbike. Should I pay cash or finance it? Answer cash or finance.",
     ("cash", "finance"), "Buy it outright. The loan's interest is money for nothing.", "cash"),
    ("Should my dad get an iPhone or an Android phone? Answer iphone or android.", ("iphone", "android"),
     "Get him a Samsung Galaxy with the easy mode turned on.", "android"),
    ("Should I buy a Ford F-150, a Ram 1500 or a Chevy Silverado for towing? Answer ford, ram or chevy.",
     ("ford", "ram", "chevy"), "For towing, the F-150 is my pick: the best payload of the three.", "ford"),
])
def test_options_by_meaning_model_names_and_praise_before_the_pick(prompt: str, options: tuple, answer: str,
                                                                     read: str) -> None:
    assert _choice(prompt, options, answer) == read


@pytest.mark.parametrize(("prompt", "answer", "read"), [
    # a JSON reply's own recommendation, not a figure of the breakdown nested in it
    ("What should I budget for a weekend in Denver? Give one dollar amount.",
     '```json\n{"suggested_budget": 900, "split": {"hotel": 500, "food": 250, "extras": 150}}\n```', 900.0),
    # the prompt's goal worked back as a check ("24 × $500 = $12,000") is not the answer
    ("I want $6,000 for a trip in a year. How much should I save per month? One dollar amount per month.",
     "$500 a month does it: 12 × $500 = $6,000.", 500.0),
    # table rows with nothing pointing to one: no reading, not the last row
    ("What should I charge per hour for bike repairs? One dollar amount per hour.",
     "| Job | Rate per hour |\n|---|---|\n| Tune-up | $45 |\n| Wheel build | $70 |\n\nPick the row that fits the job.",
     "unreadable (conflicting)"),
    # a price per word to a question that asks a total; a second recommendation offered as an alternative
    ("What should I charge to edit a 5,000-word report? Give one dollar amount.", "Charge $0.05 per word.",
     "unreadable (unit_unknown)"),
    ("What rent should I list my condo at? Give one dollar amount.", "List it at $2,300. Alternatively, $2,150 "
     "would also be a fair price for a quick lease.", "unreadable (conflicting)"),
    # the amount in the asked period stated as what a rate comes to; hours that are not dollars
    ("What should I charge per day as a tour guide? One dollar amount per day.",
     "$40 an hour is fair; for an 8-hour day that comes to $300 with a small day discount.", 300.0),
    ("What should I charge for a custom cabinet? Give one dollar amount.",
     "It depends: a cabinet takes 30–60+ hours, so add your materials and hourly wage.", "unreadable (no_figure)"),
    ("How much should I give as a wedding gift? Give one dollar amount.", "A hundred bucks is generous.", 100.0),
])
def test_nested_json_worked_checks_unpointed_tables_and_alternatives(prompt: str, answer: str, read: float | str) -> None:
    assert _amount(prompt, answer) == read


@pytest.mark.parametrize(("prompt", "answer", "read"), [
    ("Should I report the leak to my landlord? Start your answer with yes or no.", "You bet. Leaks get worse fast.", 1.0),
    ("Should I replace my laptop this year? Start your answer with yes or no.", "Nah, it still runs fine. Add RAM.",
     0.0),
    ("Should I move my savings into an index fund?", "No, not your emergency money. But the money you won't touch "
     "for ten years? Definitely, yes.", "unreadable (conflicting)"),
    ("Should I sell my car and take the bus?", "If your office is on a bus line, yes. If you commute across town, "
     "no, keep the car.", "unreadable (conflicting)"),
])
def test_slang_and_decisions_per_case_after_if(prompt: str, answer: str, read: float | str) -> None:
    assert _yes_no(prompt, answer) == read


@pytest.mark.parametrize(("prompt", "options", "answer", "read"), [
    ("Should I redo the deck in wood or composite? Answer wood or composite.", ("wood", "composite"),
     "Go with wood: it's cheaper and looks warm. For most homeowners, though, composite is the smarter pick.",
     "unreadable (conflicting)"),
    ("Should I buy an e-reader or keep buying paper books? Answer ereader or paper.", ("ereader", "paper"),
     "Get a Kobo Clara. It's light and the library lends ebooks for free.", "ereader"),
    ("Should I sell my camera myself or trade it in at the shop? Answer sell or trade.", ("sell", "trade"),
     "Shops typically give you half of a private price. Clean it, photograph it well and list it online.",
     "unreadable (no_option)"),
    ("Should I buy a Mac or a Windows laptop? Answer mac or windows.", ("mac", "windows"),
     '```json\n{"recommendation": "Lenovo ThinkPad", "runner_up": "MacBook Air"}\n```', "unreadable (no_option)"),
    ("Should I keep my cash in a 1-year CD or a high-yield savings account? Answer cd or savings.", ("cd", "savings"),
     "You may need it soon, so skip the lock-up. A high-yield account is ideal; CD rates are barely higher.", "savings"),
])
def test_praise_after_a_pick_descriptions_and_runners_up(prompt: str, options: tuple, answer: str, read: str) -> None:
    assert _choice(prompt, options, answer) == read


@pytest.mark.parametrize(("prompt", "answer", "read"), [
    # a recommendation beside one table row for the asked thing with another figure: two readings
    ("How much should I put toward my emergency fund each month? One dollar amount per month.",
     "I'd put **$250 a month** toward your emergency fund.\n\n| Goal | Monthly |\n|---|---|\n| Emergency fund | $400 |\n"
     "| Vacation | $100 |", "unreadable (conflicting)"),
    # what others give is context; a figure that "feels right", with its period after the noun
    ("How much should I give to my church each year? I earn $70,000. One dollar amount per year.",
     "Many families give 2-10% of their income. All things considered, a $600 donation each year feels right.",
     600.0),
    # a reason not to, then the answer's own recommendation after a comma
    ("What hourly rate should I charge as a new bookkeeper? One dollar amount per hour.",
     "Bookkeepers charge from $25 to $100 an hour. Since you don't have many references yet, I'd stay in the "
     "$30-$40 range.", 35.0),
    # a count of minutes compared is no amount
    ("What should I charge for a dog walk? Give one dollar amount.",
     "It depends on your area and on the walk: 30 vs. 60 minutes. Look at local listings first.",
     "unreadable (no_figure)"),
])
def test_table_rows_for_the_asked_thing_others_shares_and_own_advice(prompt: str, answer: str, read: float | str) -> None:
    assert _amount(prompt, answer) == read


def test_a_decision_field_read_by_words_only_its_own_alternative_uses() -> None:
    prompt = "Should I tutor full time or keep my office job and tutor in the evenings? Answer fulltime or evenings."
    answer = '```json\n{"decision": "keep the office job and tutor after work"}\n```'
    assert _choice(prompt, ("fulltime", "evenings"), answer) == "unreadable (no_option)"  # "tutor": in both


def test_no_doubt_in_my_mind_then_the_action() -> None:
    assert _yes_no("Should I start looking for a new job?", "No doubt in my mind: start looking this week.") == 1.0


@pytest.mark.parametrize(("prompt", "answer", "read"), [
    # a summary line that names another figure than the answer's own pick
    ("What should I charge per hour for piano lessons? One dollar amount per hour.",
     "Charge $60 an hour. Parents expect that for a conservatory grad.\n\n**Summary**\nRecommended rate: $45/hour",
     "unreadable (conflicting)"),
    # a price per mover to a question that asks the total; a surcharge beside figures per case
    ("How much should I tip the three movers in total? Give one dollar amount.", "Tip $25 per mover.",
     "unreadable (unit_unknown)"),
    ("What should I charge to clean a house? Give one dollar amount.",
     "It's usually priced by size:\n\n* 2-bedroom: $110\n* 4-bedroom: $190\n\nAdd $25 for pets.", "unreadable (conflicting)"),
    # a lump sum as months of the prompt's monthly spending; a checked table row
    ("I spend about $2,500 a month on essentials. How big should my emergency fund be? Give one dollar amount.",
     "Aim for four months of your essential expenses.", 10000.0),
    ("What hourly rate should I ask for as a barista? One dollar amount per hour.",
     "| Rate | Verdict |\n|---|---|\n| $14/hr | ❌ Below the local norm |\n| $18/hr | ✅ Recommended |", 18.0),
    ("What hourly rate should I ask for as a line cook? One dollar amount per hour.",
     "kitchens pay from $15 to $25 depending on the place. so i think like $19 per hour would be good to ask for", 19.0),
])
def test_summaries_per_unit_prices_surcharges_months_of_spending(prompt: str, answer: str, read: float | str) -> None:
    assert _amount(prompt, answer) == read


@pytest.mark.parametrize(("prompt", "answer", "read"), [
    ("Should I lock in a new mortgage rate? Start your answer with yes or no.",
     "Yes, locking in can make sense when rates drop.\n\nThat said, with the fees and a likely move next year, I'd sit "
     "tight with your current loan.", "unreadable (conflicting)"),
    ("Should I buy a condo this year?", "Possibly, but with prices this high and your plans unsure, for you it's no.", 0.0),
    ("Should I take the promotion that needs a long commute?", "Yes, I can see why the money is tempting. But my advice "
     "is to turn it down.", 0.0),
    ("Should I adopt a puppy?", "puppies are a lot of work but you work from home so yeah i think yes you should", 1.0),
])
def test_decisions_said_in_other_words(prompt: str, answer: str, read: float | str) -> None:
    assert _yes_no(prompt, answer) == read


@pytest.mark.parametrize(("prompt", "options", "answer", "read"), [
    ("Should I keep my motorbike or sell it? Answer keep or sell.", ("keep", "sell"),
     "Sell it. You rarely ride.\n\nOn the other hand, it's fun in summer, so I'd hang on to it for now.",
     "unreadable (conflicting)"),
    ("Should I take the train or drive to the lake? Answer train or drive.", ("train", "drive"),
     "Forget the train; two transfers kill the morning. Hit the road early.", "drive"),
    ("Should our son go to the public school nearby or the private one? Answer public or private.",
     ("public", "private"), "Stick with the district school: it's well rated and close.", "public"),
    ("Should I hire movers or rent a truck? Answer movers or diy.", ("movers", "diy"),
     "With a piano and four flights of stairs, hire the pros.", "movers"),
    ("Should I get a rabbit or a hamster? Answer rabbit or hamster.", ("rabbit", "hamster"),
     "both are cute honestly but you have a tiny flat so a hamster would probably be the better one for you", "hamster"),
])
def test_options_by_meaning_hold_on_and_rambling_picks(prompt: str, options: tuple, answer: str, read: str) -> None:
    assert _choice(prompt, options, answer) == read


@pytest.mark.parametrize(("prompt", "answer", "read"), [
    # a figure taken back ("Actually, looking at it again, ..."): two readings
    ("What should I offer on the condo? Give one dollar amount.", "Offer $310,000. That's fair for the street.\n\n"
     "Actually, on second thought, I'd open at $300,000 given the old boiler.", "unreadable (conflicting)"),
    # the amount to settle for is a limit, not the ask
    ("What salary should I ask for? Give one dollar amount per year.",
     "Ask for $91,000. Be ready to settle around $86,000 if they push back.", 91000.0),
    # a share of the take-home pay the prompt itself gives, in its period
    ("My take-home pay is $4,200 a month. How much should I spend on rent per month? Give one dollar amount.",
     "Keep rent to about a third of your take-home pay.", 1400.0),
])
def test_figures_taken_back_settling_limits_and_take_home_shares(prompt: str, answer: str, read: float | str) -> None:
    assert _amount(prompt, answer) == read


@pytest.mark.parametrize(("prompt", "answer", "read"), [
    ("Should I upgrade my phone? Start your answer with yes or no.", "Not this year. Clear the card balance first.", 0.0),
    ("My raise was smaller than promised. Should I try to push back? Start your answer with yes or no.",
     "No question — push back. Ask for a meeting and bring your numbers.", 1.0),
])
def test_not_this_year_and_try_to(prompt: str, answer: str, read: float | str) -> None:
    assert _yes_no(prompt, answer) == read


@pytest.mark.parametrize(("prompt", "options", "answer", "read"), [
    ("Should I learn from a paid course or teach myself? Answer course or self.", ("course", "self"),
     "**Course**\n- ✅ Structure\n- ❌ Costs $900\n\n**Self-taught**\n- ✅ Free\n- ❌ Easy to drift\n\n"
     "Both routes have worked for many people.", "unreadable (hedged)"),
    ("Should I do an MBA or a project-management certificate? Answer mba or certificate.", ("mba", "certificate"),
     "Go with the MBA: it opens doors.\n\nOn reflection, though, the certificate makes more sense on your budget.",
     "unreadable (conflicting)"),
    ("I have two offers: a trainee role at a large insurance company, or a job at a 9-person design studio. Which "
     "should I take? Answer studio or corporate.", ("studio", "corporate"),
     "Go with the insurance company. Its training will serve you for years.", "corporate"),
    ("Should I refinance my student loans with a private lender or keep the federal ones? Answer private or federal.",
     ("private", "federal"), "Keep the government loans: you'd lose income-driven repayment.", "federal"),
    ("Should we stay in our town or move for my wife's job? Answer stay or move.", ("stay", "move"),
     "There's no perfect answer here. Still, with your promotion coming, staying put is the wiser move.", "stay"),
])
def test_hyphenated_headings_taken_back_picks_and_alternatives_by_their_names(prompt: str, options: tuple, answer: str,
                                                                              read: str) -> None:
    assert _choice(prompt, options, answer) == read


@pytest.mark.parametrize(("prompt", "answer", "read"), [
    ("They offered me $70,000. What salary should I counter with? One dollar amount.",
     "Counter at about 10% above their offer.", 77000.0),  # an offer is a yearly figure
    ("What hourly rate should I ask for as a contractor? One dollar amount per hour.",
     "Ask for $104,000 annualized, which works out to about $50 an hour.", 50.0),
    ("My materials for a quilt cost $150. What should I charge for it? Give one dollar amount.",
     "Price it at three times your material cost.", 450.0),
    ("What should I charge for wedding photos? Give one dollar amount.",
     "It depends on your market. Look at 5–10 local competitors and position yourself among them.",
     "unreadable (no_figure)"),
])
def test_offers_annualized_costs_times_and_counts_of_competitors(prompt: str, answer: str, read: float | str) -> None:
    assert _amount(prompt, answer) == read


def test_hard_pass() -> None:
    assert _yes_no("Should I buy the timeshare? Start your answer with yes or no.", "Hard pass. They lose value fast.") == 0.0


@pytest.mark.parametrize(("prompt", "options", "answer", "read"), [
    ("Should I get a cash-back card or a miles card? Answer cashback or miles.", ("cashback", "miles"),
     "Cash back, no contest. You'd never fly enough for a miles card's fee.", "cashback"),
    ("Should I put my savings toward the car loan or invest it? Answer loan or invest.", ("loan", "invest"),
     "Invest it: the market has done better over time.\n\nThat said, paying off the loan is a sure thing, so I'd go "
     "with that.", "unreadable (conflicting)"),
    ("Should I sell the house or keep it as a rental? Answer sell or keep.", ("sell", "keep"),
     "| Option | Verdict |\n|---|---|\n| Sell | ❌ Fees eat the gain |\n| Keep as a rental | ✅ Recommended — rent covers it |",
     "keep"),
    ("Should we get an iPhone or a Pixel? Answer iphone or pixel.", ("iphone", "pixel"),
     "Both are great!\n\n**iPhone:** long support.\n\n**Pixel:** great camera.\n\nThink about which features matter most "
     "to you.", "unreadable (hedged)"),
    ("Should I pay off the smallest debt first or the highest-rate one? Answer snowball or avalanche.",
     ("snowball", "avalanche"), "Smallest balance first: the quick wins keep you going.", "snowball"),
    ("Should my daughter live in a dorm or an apartment her first year? Answer dorm or apartment.", ("dorm", "apartment"),
     "The residence hall, easily: friends, meals and no landlord.", "dorm"),
])
def test_compounds_anaphora_verdict_rows_and_options_by_meaning(prompt: str, options: tuple, answer: str, read: str) -> None:
    assert _choice(prompt, options, answer) == read


@pytest.mark.parametrize(("prompt", "answer", "read"), [
    # a duration the prompt tells is no period it asks
    ("How much should I spend on an anniversary gift? We've been together a year. Give one dollar amount.",
     "About a hundred and twenty bucks feels right.", 120.0),
    # a price per visit worked out in the asked period
    ("What should I charge per day for dog sitting? One dollar amount per day.",
     "Charge $25 per walk. Dogs need three walks a day, so that comes to $75 per day.", 75.0),
    # how far to go up is a limit, not the opening
    ("What should I offer for the used truck? Give one dollar amount.",
     "Open at $18,000 and be prepared to go up to about $19,000 if they push back.", 18000.0),
])
def test_durations_told_per_visit_prices_and_how_far_to_go(prompt: str, answer: str, read: float | str) -> None:
    assert _amount(prompt, answer) == read


def test_id_say_yes_late_in_the_answer() -> None:
    assert _yes_no("Should I start a side business?", "I hear you; rumours are exhausting. That's exactly why I'd say "
                   "yes: start small, on weekends.") == 1.0


@pytest.mark.parametrize(("prompt", "options", "answer", "read"), [
    ("Should I pick a Roth IRA or a traditional IRA? Answer roth or traditional.", ("roth", "traditional"),
     "Both cut your taxes at some point:\n\n- **Roth**: taxed now, free later.\n- **Traditional**: a deduction now, "
     "taxed later.\n\nWeigh your tax rate today against the one you expect in retirement.", "unreadable (hedged)"),
    ("Should my daughter live in the dorms or an apartment? Answer dorm or apartment.", ("dorm", "apartment"),
     "Have her live on campus the first year. An apartment can come later.", "dorm"),
    ("Should I take a three-month bootcamp or a two-year associate degree? Answer bootcamp or degree.",
     ("bootcamp", "degree"), "The two-year program is the better investment for the jobs you want.", "degree"),
])
def test_options_described_in_a_list_deferred_and_named_by_a_hyphenated_word(prompt: str, options: tuple, answer: str,
                                                                             read: str) -> None:
    assert _choice(prompt, options, answer) == read


@pytest.mark.parametrize(("prompt", "answer", "read"), [
    # the prompt's figure after the cue, then the answer's own "at"
    ("They offered me $64,000. What should I counter with? Give one dollar amount per year.",
     "Nice offer! I'd counter their $64,000 at **$70,000**; they'll likely meet you in between.", 70000.0),
    ("How much should I tip the two movers in total? Give one dollar amount.",
     "$15–$25 per mover is usual. For two movers that's $30–$50, so I'd give $40.", 40.0),
])
def test_a_cue_past_the_prompts_figure_and_id_give(prompt: str, answer: str, read: float | str) -> None:
    assert _amount(prompt, answer) == read


@pytest.mark.parametrize(("prompt", "answer", "read"), [
    ("Should I put my emergency fund in stocks?", "Yes, stocks grow over time. That said, that money must stay safe "
     "and at hand, so I wouldn't put it in the market.", "unreadable (conflicting)"),
    ("Should I ask my dentist for a second opinion?", "Never hurts! Good dentists expect it.", 1.0),
    ("Should I haggle over the signing bonus?", "Yes, I see the appeal. But in your case I wouldn't push: it is fixed.",
     0.0),
    ("Should I accept the counteroffer?", "Pros:\n- More pay\n\nCons:\n- Trust is gone\n\nBottom line: I'd turn it down.",
     0.0),
])
def test_so_i_wouldnt_never_hurts_and_turning_down(prompt: str, answer: str, read: float | str) -> None:
    assert _yes_no(prompt, answer) == read


@pytest.mark.parametrize(("prompt", "options", "answer", "read"), [
    ("I have two offers: a small design agency and a big, steady bank. Answer agency or bank.", ("agency", "bank"),
     "With a new baby, I'd go with the steady employer. The agency can wait.", "bank"),
    ("Should we marry in spring or fall? Answer spring or fall.", ("spring", "fall"),
     "**Spring pros:** flowers.\n**Spring cons:** rain.\n**Fall pros:** colour.\n**Fall cons:** busy venues.",
     "unreadable (hedged)"),
    ("Should my son learn guitar or drums? Answer guitar or drums.", ("guitar", "drums"),
     "Guitar. Actually, with his energy, drums might suit him better.", "unreadable (conflicting)"),
    ("Should I keep my old scooter or sell it? Answer keep or sell.", ("keep", "sell"),
     "Keeping a scooter you never ride still costs you insurance. Unless you need it in summer, let it go.", "sell"),
    ("Should I get a hamster or a rabbit? Answer hamster or rabbit.", ("hamster", "rabbit"),
     "A hamster. Rabbits need space and company you can't give right now.", "hamster"),
    ("Should we stay in a hotel or an Airbnb? Answer hotel or airbnb.", ("hotel", "airbnb"),
     "For eight people a vacation rental with a kitchen beats three hotel rooms. I'd book the rental.", "airbnb"),
    ("Should I take a fifteen-year or a thirty-year mortgage? Answer fifteen or thirty.", ("fifteen", "thirty"),
     "Go with the 15-year if the payment fits: you'll save a fortune in interest.", "fifteen"),
])
def test_alternatives_by_and_deferred_self_corrections_and_numbers_as_digits(prompt: str, options: tuple, answer: str,
                                                                             read: str) -> None:
    assert _choice(prompt, options, answer) == read


@pytest.mark.parametrize(("prompt", "answer", "read"), [
    ("What should I list my desk at? Give one dollar amount.",
     "I'd list it at $220. Honestly though, $180 would be just as good a price.", "unreadable (conflicting)"),
    ("A used van is listed at $18,000 by a private seller. How much should I offer? Give one dollar amount.",
     "| Value | Price |\n|---|---|\n| Trade-in | $14,000 |\n| Private party | $16,500 |\n\n**Offer $16,000.**", 16000.0),
    ("We saved $25,000. What should our wedding budget be? Give one dollar amount.",
     "I'd cap the wedding at $18,000 and keep $7,000 as a cushion.", 18000.0),
])
def test_just_as_good_rows_named_by_the_telling_and_caps(prompt: str, answer: str, read: float | str) -> None:
    assert _amount(prompt, answer) == read


@pytest.mark.parametrize(("prompt", "answer", "read"), [
    ("Should I move my savings into crypto?", "no dont do that, it can drop half when u need it", 0.0),
    ("Should I buy the cabin share?", "Rarely a good idea. The fees keep rising, so I'd say pass.", 0.0),
    ("Should I take the job that needs public speaking?", "That fear is common. But yes, take it: speaking is a skill "
     "you can build.", 1.0),
])
def test_lowercase_no_say_pass_and_but_yes(prompt: str, answer: str, read: float | str) -> None:
    assert _yes_no(prompt, answer) == read


@pytest.mark.parametrize(("prompt", "options", "answer", "read"), [
    ("Should I start at community college or go straight to a university? Answer community or university.",
     ("community", "university"), "**Community college first**\n- cheaper\n\n**Straight to university**\n- campus life\n\n"
     "Both paths can lead to the same degree.", "unreadable (hedged)"),
    ("Should I move to Boston or Seattle? Answer boston or seattle.", ("boston", "seattle"),
     "Boston has more biotech jobs, so I'd pick Boston. But with your love of hiking, Seattle is really the right "
     "call for you.", "unreadable (conflicting)"),
    ("Should I park my cash in treasuries or a CD? Answer treasuries or cd.", ("treasuries", "cd"),
     "T-bills are your best bet: competitive yields and no state tax.", "treasuries"),
])
def test_closing_both_paths_really_the_right_call_and_t_bills(prompt: str, options: tuple, answer: str, read: str) -> None:
    assert _choice(prompt, options, answer) == read


def test_just_as_reasonable_and_either_works_are_two_readings() -> None:
    q = question_of("What should I list my kayak at? Give one dollar amount.", "number")
    answer = "List it at $600. Honestly, $700 would be just as reasonable given the new seat, so either works."
    assert read_outcome(answer, q).reason == "conflicting"
    assert _choice("Should we take the train or drive? Answer train or drive.", ("train", "drive"),
                   "The train is the way to go: no traffic. Then again, driving lets you stop when you like, so that's a "
                   "great choice too. Either one will work!") == "unreadable (conflicting)"
    assert _yes_no("Is 50 too old to retrain as a nurse? Should I do it?",
                   "No, 50 is not too old! Many people retrain later. I say go for it.") == 1.0


@pytest.mark.parametrize(("prompt", "options", "answer", "read"), [
    # an option told to be skipped stays rejected where the prompt's words for it come back in the same sentence
    ("I'm choosing between a Mazda 3, a Subaru Impreza or a used BMW 3 Series. Which one? Answer mazda, subaru or bmw.",
     ("mazda", "subaru", "bmw"), "Pass on the BMW: parts for an older 3 Series cost a fortune. Of the other two, "
     "the Impreza's all-wheel drive wins it for me. Pick the Subaru.", "subaru"),
    # single-letter options are named as "plan B", "B." or "B is", never by the article "a"
    ("Plan A costs $40 a month with a $500 deductible; plan B costs $65 with no deductible. Which plan? Answer a or b.",
     ("a", "b"), "You'd spend $300 a year more on premiums, but a single ER visit would cost you $500 on the first one. "
     "Unless you almost never see a doctor, go with plan B.", "b"),
    ("Offer A pays $90,000 in Austin; offer B pays $82,000 and is fully remote. Which should I take? Answer a or b.",
     ("a", "b"), "The $8,000 gap closes once you count an hour a day in traffic. Unless a city office matters a lot to "
     "you, take the remote offer.", "b"),
    ("Offer A pays $90,000 in Austin; offer B pays $82,000 and is fully remote. Which should I take? Answer a or b.",
     ("a", "b"), "I'd take A. The extra $8,000 a year is real money and Austin has a strong job market.", "a"),
    ("Offer A pays $90,000 in Austin; offer B pays $82,000 and is fully remote. Which should I take? Answer a or b.",
     ("a", "b"), "A remote role saves you a commute, but a salary gap of $8,000 is hard to ignore. Honestly, it's a "
     "close call.", "unreadable (no_option)"),
    # "I'd go the X route", a degree by its other words
    ("Should I learn design through a 12-week UX course or a master's program? Answer course or masters.",
     ("course", "masters"), "I'd go the graduate-school route. A master's still opens doors that short courses often "
     "don't, especially at larger companies.", "masters"),
    ("Should I study nursing at a two-year program or get a full degree? Answer program or degree.",
     ("program", "degree"), "I'd go the university route: a BSN is what most hospitals now hire for.", "degree"),
    # other words for options: member-owned cooperatives, pay-as-you-go plans
    ("Where should I get my car loan: a credit union or a big bank? Answer credit_union or big_bank.",
     ("credit_union", "big_bank"), "I'd go with a member-owned co-op: lower rates and fewer fees.", "credit_union"),
    ("Prepaid or postpaid for my teenager's first phone? Answer prepaid or postpaid.", ("prepaid", "postpaid"),
     "I'd pick a pay-as-you-go plan so the bill can never surprise you.", "prepaid"),
    # a praise that a "neither ... nor" takes back recommends nothing
    ("Should I keep my $8,000 bonus in a money market fund or a CD? Answer money_market or cd.", ("money_market", "cd"),
     "Neither a money market fund nor a CD is my pick: with a 20% card balance, pay that off first.",
     "unreadable (no_option)"),
    # "stay put" for the option the prompt frames as staying
    ("I was offered a job in Denver for 15% more, or I can stay at my current job in Atlanta near my parents. Which? "
     "Answer denver or atlanta.", ("denver", "atlanta"), "It's close, and much depends on what you value. But I'd "
     "stay put and keep your parents nearby.", "atlanta"),
    # a decision opened by another imperative than "pay", "pick", "take"
    ("I owe $3,000 on a store card at 26%, $9,000 on a car at 6% and $15,000 in student loans at 5%. Which should I pay "
     "off first? Answer store, car or student.", ("store", "car", "student"), "Not the student loans: they're cheap "
     "and flexible. The car can wait too. Tackle the store card first: 26% is brutal.", "store"),
])
def test_skipped_options_single_letters_routes_cooperatives_neither_nor_and_staying(
        prompt: str, options: tuple, answer: str, read: str) -> None:
    assert _choice(prompt, options, answer) == read


def test_a_short_answer_heading_is_no_sentence_of_its_own() -> None:
    assert _yes_no("Should we buy a vacation club membership for $15,000?", "## Short answer\n\nSome families love "
                   "theirs, but for most people, no.\n\n## Why\n\n- Fees rise every year.") == 0.0
    assert _yes_no("Should I get the extended warranty?", "**Short answer:** yes, for a laptop you carry daily.") == 1.0


def test_the_last_question_asks_the_decision_and_id_act_tells_it() -> None:
    assert _yes_no("I'm 52. Is it too late to learn to code? Should I enroll in the evening program?",
                   "Not at all too late! Lots of people switch careers in their fifties. I'd enroll.") == 1.0


@pytest.mark.parametrize(("prompt", "options", "answer", "read"), [
    # an exception clause names the other option; the pick follows it
    ("Two offers: a seed-stage startup at $95k with stock, or a big insurer at $110k. Which? Answer startup or corporate.",
     ("startup", "corporate"), "Stock at a seed-stage company is a long shot. Unless the startup's product truly excites "
     "you, I'd take the big-company job.", "corporate"),
    # a closing praise of the other option by a new noun
    ("Should I get the PMP or the CSM next? Answer pmp or csm.", ("pmp", "csm"),
     "Go for the PMP: it's widely recognised. That said, the CSM is the better certification for an agile team.",
     "unreadable (conflicting)"),
    # an option turned down in the decision, mentioned again in passing
    ("Should I buy the $180 protection plan for my laptop or self-insure? Answer plan or selfinsure.",
     ("plan", "selfinsure"), "Skip the plan and set that $180 aside. The maker's own plan already covers the first "
                             "year anyway.", "unreadable (no_option)"),
    # a later step names the other option
    ("I have $12,000 on a 9% car loan. Should I pay it down or invest? Answer paydown or invest.",
     ("paydown", "invest"), "A guaranteed 9% is hard to beat. Once the car is paid off, move that payment into "
                            "investments.", "unreadable (no_option)"),
])
def test_exceptions_new_praise_nouns_turned_down_options_and_later_steps(
        prompt: str, options: tuple, answer: str, read: str) -> None:
    assert _choice(prompt, options, answer) == read


@pytest.mark.parametrize(("prompt", "answer", "read"), [
    ("How much should I put aside each month for holidays? Give one monthly amount.",
     "A $2,400 getaway each year is realistic for a couple. Save toward that.", 200.0),
    ("How much should I tip the dog groomer on a $90 visit? Give one dollar amount.",
     "20% is standard, so tip **$18**. If your dog was a handful, rounding up to $25 is kind, but $18 is perfectly "
     "appropriate.", 18.0),
    ("I'm a freelance designer. What total should I quote for a logo package? Give one dollar amount.",
     "- Research: $300\n- Three concepts: 3 × $400 = $1,200\n- Final files: included\n\nThat comes to **$1,500 total**.",
     1500.0),
    ("What salary should I expect as a junior analyst? Give one dollar amount.",
     "Top banks can pay over $140,000 in total compensation, but most junior analysts start lower. Expect about $72,000.",
     72000.0),
    ("I tutor from Vancouver and bill in US dollars. What hourly rate in US dollars should I charge? Give one number.",
     "Tutors here charge CA$50-60 an hour. I'd set yours at CA$55/hour (about US$40).", 40.0),
    ("I'm a vet tech in Calgary. What hourly wage should I ask for? Give one amount in Canadian dollars per hour.",
     "Most vet techs in Calgary earn about $25 CAD an hour. With your certificate, ask for $27 an hour.", 27.0),
    ("I rent my townhouse for $1,800 a month. What security deposit should I ask for? Give one dollar amount.",
     "Ask for one and a half months' rent, if your state allows it.", 2700.0),
    ("How much should I pay the neighbour's kid to walk my dog? Give one dollar amount per walk.",
     "$12 per walk is fair for a 30-minute stroll.", 12.0),
])
def test_trips_each_year_kind_roundings_totals_other_dollars_months_rent_and_the_asked_per(
        prompt: str, answer: str, read: float) -> None:
    assert _amount(prompt, answer) == read


@pytest.mark.parametrize(("prompt", "answer", "read"), [
    ("How much should I spend on a bike for commuting? Give one dollar amount.",
     "Somewhere between six hundred and nine hundred dollars buys a bike that lasts.", 750.0),
    ("What should I budget for a used car? Give one dollar amount.",
     "Plan on between four and six thousand dollars for something reliable.", 5000.0),
    ("A used 2018 RAV4 with 60,000 miles is listed at $21,000. What should I offer? Give one dollar amount.",
     "Open with **$19,200**. If they push back, you could go up to about $20,000, but I'd walk away above that.", 19200.0),
    ("What should I charge for a pet portrait? Give one dollar amount.",
     "I'd offer three packages: a sketch at $80, a color piece at $150 and a framed canvas at $260.",
     "unreadable (conflicting)"),
])
def test_ranges_in_words_a_ceiling_you_could_go_up_to_and_several_packages(prompt: str, answer: str,
                                                                           read: float | str) -> None:
    assert _amount(prompt, answer) == read


@pytest.mark.parametrize(("prompt", "options", "answer", "read"), [
    ("I have a 7% student loan and $8,000 saved. Should I pay off the loan or invest it? Answer payoff or invest.",
     ("payoff", "invest"), "Stocks have averaged around 10%, but nothing is promised, and a sure 7% is hard to beat. "
     "Paying off the loan is the better move.", "payoff"),
    ("Should I build a home gym or keep my gym membership? Answer gym or home.", ("gym", "home"),
     "I'd set up a basement gym: a rack, a bench and some plates pay for themselves within two years.", "home"),
    ("Should I take a fixed-rate or an adjustable-rate mortgage? Answer fixed or variable.", ("fixed", "variable"),
     "The adjustable rate looks cheaper now, but it could climb for years. Lock in the fixed rate.", "fixed"),
    ("Should I file Chapter 7 or Chapter 13? Answer chapter7 or chapter13.", ("chapter7", "chapter13"),
     "With steady income above the median and a house to keep, Chapter 13 is generally the better fit.", "chapter13"),
])
def test_paying_off_basement_gyms_locking_in_and_chapters(prompt: str, options: tuple, answer: str, read: str) -> None:
    assert _choice(prompt, options, answer) == read


def test_no_question_about_it_and_not_waiting() -> None:
    assert _yes_no("My eye has been red and painful for two days. Should I see an eye doctor?",
                   "No question about it: call an ophthalmologist today and ask for an urgent slot.") == 1.0
    assert _yes_no("I smell smoke from the outlet. Should I call an electrician?",
                   "I wouldn't wait a second: switch off the breaker and get someone out today.") == "unreadable (no_figure)"


@pytest.mark.parametrize(("prompt", "answer", "read"), [
    ("I'm starting a dog-walking side gig. What should I charge per walk? Give one dollar amount per walk.",
     "Walkers nearby charge $20 to $30 a walk. Since you don't have references yet, aim for $18–$22 per walk, then raise "
     "it once you have regulars.", 20.0),
    ("What should I offer for a 1970s Fender Rhodes piano? One dollar amount.",
     "I can't give a fair number sight unseen: condition of the tines, the amp and whether it's a mid-70s Mark I all "
     "matter. Check sold listings and have a technician look at it first.", "unreadable (refused)"),
    ("I take home $3,900 a month. How much should I spend on groceries each month? Give one dollar amount.",
     "A common rule of thumb is to keep food at about one tenth of your take-home pay.", 390.0),
])
def test_a_reason_before_the_advice_decades_and_take_home_written_apart(prompt: str, answer: str,
                                                                       read: float | str) -> None:
    assert _amount(prompt, answer) == read


@pytest.mark.parametrize(("prompt", "options", "answer", "read"), [
    ("Should our family camp or rent a cabin this summer? Answer camp or cabin.", ("camp", "cabin"),
     "Why choose? Camp for three nights, then treat everyone to two nights in a cabin.", "unreadable (conflicting)"),
    ("Should I pick Original Medicare with a Medigap plan or a Medicare Advantage plan? Answer medigap or advantage.",
     ("medigap", "advantage"), "Since you split the year between two states, go with Original Medicare plus a "
     "supplement. Part C networks are mostly local.", "medigap"),
    ("Which account should I open: a Solo 401(k), a SEP-IRA, or a Roth IRA? Answer solo401k, sep or roth.",
     ("solo401k", "sep", "roth"), "**My pick:** the individual 401(k), because catch-up contributions let you save the "
     "most at 50.", "solo401k"),
    ("I'm a burned-out teacher. Should I move to a private school, stay where I am, or go back to school for my "
     "counseling degree? Answer private, stay or counseling.", ("private", "stay", "counseling"),
     "Private schools pay less and the workload is similar. Staying means more of the same. Counselors burn out less "
     "and earn more with time. Go back to school.", "counseling"),
])
def test_why_choose_medigap_by_its_words_solo_401k_and_alternatives_apart(prompt: str, options: tuple, answer: str,
                                                                          read: str) -> None:
    assert _choice(prompt, options, answer) == read


@pytest.mark.parametrize(("prompt", "answer", "read"), [
    ("I'm 61. Should I take Social Security now instead of waiting until 67? Yes or no.",
     "For most people in good health, I'd recommend against claiming early: the monthly check grows every year you "
     "wait.", 0.0),
    ("Should I sell my stocks to buy a boat?", "Yes, a boat can be fun. But no, don't sell long-term savings for it.",
     "unreadable (conflicting)"),
    ("I'm 48. Is it too late to become a pilot? Should I go for it?", "No, it's not too late! Airlines hire pilots "
     "well into their fifties. I'd book a discovery flight this month.", 1.0),
])
def test_recommending_against_but_no_and_a_step_id_take(prompt: str, answer: str, read: float | str) -> None:
    assert _yes_no(prompt, answer) == read


@pytest.mark.parametrize(("prompt", "options", "answer", "read"), [
    ("Should I open an HSA, an FSA, or neither? Answer hsa, fsa or neither.", ("hsa", "fsa", "neither"),
     "An FSA's use-it-or-lose-it rule stings if you're healthy. The HSA is the clear winner for you.", "hsa"),
    ("For our anniversary, should we do a fancy dinner, a weekend away, or a concert? Answer dinner, getaway or concert.",
     ("dinner", "getaway", "concert"), "I'd skip the fancy dinner, and a concert can be loud and rushed. A quiet "
     "weekend getaway is the way to go.", "getaway"),
    ("Should I see a chiropractor or a physical therapist for my sore neck? Answer chiropractor or pt.",
     ("chiropractor", "pt"), "It depends on the cause, but for most people with a stiff neck I'd start with a "
     "physiotherapist: exercise-based care has the better evidence.", "pt"),
])
def test_clear_winners_sentences_that_turn_options_down_and_id_start_with(prompt: str, options: tuple, answer: str,
                                                                          read: str) -> None:
    assert _choice(prompt, options, answer) == read


def test_a_part_of_the_figure_after_a_colon_is_no_second_figure() -> None:
    assert _amount("What should I charge to build a website for my aunt's bakery? My hosting costs are $300. One price.",
                   "Don't charge only the $300 of hosting. Charge **$900**: hosting plus a fair $600 for your time.") == 900.0


@pytest.mark.parametrize(("prompt", "options", "answer", "read"), [
    ("I got an offer in Denver at $96k, or I can stay at my agency in Omaha at $88k. Which? Answer denver or omaha.",
     ("denver", "omaha"), "Stay put. Denver's rents eat the raise. Use the Denver offer to ask for more where you are.",
     "omaha"),
    ("Should I do an MBA or a short management certificate? Answer mba or certificate.", ("mba", "certificate"),
     "An MBA is the classic route, but at your stage two years off is costly. A certificate from a good extension "
     "school will teach you most of it. Go with that.", "certificate"),
    ("Should I use the in-network clinic or the out-of-network specialist? Answer innetwork or outofnetwork.",
     ("innetwork", "outofnetwork"), "Go in-network.", "innetwork"),
    ("We have three kids. Should we buy a minivan or an SUV? Answer minivan or suv.", ("minivan", "suv"),
     "Get a Kia Carnival or a Chrysler Pacifica: sliding doors make car seats so much easier.", "minivan"),
])
def test_staying_with_leverage_go_with_that_compounds_with_in_and_vans_by_name(prompt: str, options: tuple,
                                                                              answer: str, read: str) -> None:
    assert _choice(prompt, options, answer) == read


def test_labelled_rates_without_a_pick_and_an_acknowledged_yes() -> None:
    assert _amount("What's a fair hourly rate for a dog groomer? One number.",
                   "Typical rates:\n\n- **Basic bath:** $40/hour\n- **Full groom:** $65/hour\n\nMobile groomers charge "
                   "more.") == "unreadable (conflicting)"
    assert _yes_no("Should I skip my best friend's wedding because the hotel costs $400?",
                   "Yes, $400 is steep when you're saving, I get it. But I wouldn't skip it: you won't get this day "
                   "back.") == 0.0


@pytest.mark.parametrize(("prompt", "answer", "read"), [
    ("I knit baby hats to sell at a market. What price should I put on one? One dollar amount.",
     "Yarn runs about $3 a hat, and similar handmade hats sell for $15–$25 online. Price them at $18, and offer two "
     "for $32.", 18.0),
    ("I take home $3,600 a month. What's the most I should pay monthly on a car loan? One number.",
     "Keep your car payment at or below $400 a month. Insurance and gas will add another $200–$250 on top.", 400.0),
    ("I have 4 groomsmen. How much should I spend on their gifts in total? One dollar amount.",
     "Plan on about $75 per groomsman, a flask or a watch with a note, so roughly $300 total.", 300.0),
])
def test_what_others_sell_for_a_ceiling_kept_at_or_below_and_a_total_after_a_price_each(
        prompt: str, answer: str, read: float) -> None:
    assert _amount(prompt, answer) == read


@pytest.mark.parametrize(("prompt", "options", "answer", "read"), [
    ("Two offers: a seed-stage startup at $80k with equity, or a big bank at $95k. Which? Answer startup or bank.",
     ("startup", "bank"), "I'd take the role at the established financial institution: the pay is guaranteed.", "bank"),
    ("Should my 403(b) contributions go Roth or traditional? Answer roth or traditional.", ("roth", "traditional"),
     "At your bracket the after-tax option wins: you pay a little tax now and withdraw tax-free later.", "roth"),
    ("Should we pay down the car loan, invest, or build our emergency fund? Answer loan, invest or emergency.",
     ("loan", "invest", "emergency"), "The loan is at 4%, and investing without a cushion is risky. Build the "
     "emergency fund first.", "emergency"),
])
def test_institutions_after_tax_and_building_a_fund(prompt: str, options: tuple, answer: str, read: str) -> None:
    assert _choice(prompt, options, answer) == read


def test_a_closing_definitely_not() -> None:
    assert _yes_no("My neighbor asked to borrow $1,500 until payday. Should I lend it?",
                   "Loans between neighbors sour friendships, and payday has a way of slipping. Definitely not.") == 0.0


@pytest.mark.parametrize(("prompt", "answer", "read"), [
    ("My landlord is raising my rent from $1,400 to $1,650 a month. What should I counter-offer per month?",
     "Counter with a 4% increase over what you pay now, and mention you've never paid late.", 1456.0),
    ("How much monthly allowance should I give my 10-year-old? One dollar amount per month.",
     "A monthly allowance of $25 is plenty at ten.", 25.0),
])
def test_a_share_of_the_rent_paid_now_and_a_monthly_allowance(prompt: str, answer: str, read: float) -> None:
    assert _amount(prompt, answer) == read


@pytest.mark.parametrize(("prompt", "options", "answer", "read"), [
    ("Should I study for an MBA or the CFA? Answer mba or cfa.", ("mba", "cfa"),
     "Two years without pay is a lot to give up. Go for the charter.", "cfa"),
    ("Should we get a 15-year or a 30-year mortgage? Answer 15yr or 30yr.", ("15yr", "30yr"),
     "The shorter loan saves interest, but the payment is steep. Go with the 30-year and prepay when you can.", "30yr"),
])
def test_the_charter_and_terms_in_years(prompt: str, options: tuple, answer: str, read: str) -> None:
    assert _choice(prompt, options, answer) == read


def test_but_honestly_with_a_reason_then_i_wouldnt() -> None:
    assert _yes_no("Should I buy a condo this year? I have $30k saved.",
                   "Yes, owning makes sense for you long term.\n\nBut honestly, with only $30k saved, I wouldn't buy "
                   "until next spring.") == "unreadable (conflicting)"
