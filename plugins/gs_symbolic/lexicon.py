"""Closed-class English words the proposition matcher reads (general grammar, not domain vocabulary)."""

from __future__ import annotations

from mrpvm.plugins.sdk.lexicon import IMPERATIVE_VERBS, word_set
from mrpvm.plugins.sdk.text import stems

__all__ = ["IMPERATIVE_VERBS"]

AUX = word_set(
    """is are was were am be been being do does did has have had can could will would shall should may might
    must isn't aren't wasn't weren't don't doesn't didn't hasn't haven't hadn't can't cannot couldn't won't
    wouldn't shan't shouldn't mustn't"""
)
# Modals that make a question hypothetical or predictive, and the statement modals that state the same.
HYPOTHETICAL_MODALS = {"would": {"would", "will"}, "could": {"could", "can"}, "might": {"might", "may"}}
# "rarely" and its kin mean "almost never": a yes/no answer reports them as No (quoting the sentence)
NEGATORS = word_set(
    "not no never cannot neither nor none nothing nobody nowhere rarely seldom hardly scarcely"
)
NEGATIVE_VERBS = word_set(
    "lack lacks lacked lacking unable fail fails failed failing "
    "discourage discourages discouraged forbid forbids forbidden prohibit prohibits prohibited"
)
# Words that give a sentence deontic force (what one should do): a "Should …?" question is answered by a
# recommendation, a requirement or a command, not by a statement of what is possible or what some do.
DEONTIC = word_set(
    "should shouldn't must mustn't ought shall need needs needed required requires require mandatory "
    "recommend recommends recommended recommendation advise advises advised advisable discourage "
    "discourages discouraged encourage encourages encouraged prefer preferred preferable better best "
    "avoid forbid forbids forbidden prohibit prohibits prohibited fine okay ok wise idea"
)
# Sameness and its opposite: "Is X the same as Y?" answered by "X is distinct from Y" is answered No.
SAMENESS = word_set("same identical equivalent equal synonymous interchangeable alike")
DIFFERENCE = word_set("different differs differ distinct unlike unequal")
NECESSITY = word_set("required mandatory obligatory compulsory necessary needed requires require")
OPTIONALITY = word_set("optional voluntary unnecessary unneeded")
# pairs of opposite predicates: one asked, the other said, answers No ("required?" / "is optional")
OPPOSITES = ((SAMENESS, DIFFERENCE), (NECESSITY, OPTIONALITY))
HEDGES = word_set(
    """if unless may might could would possibly perhaps probably likely unlikely whether suppose supposing
    allegedly reportedly presumably"""
)
CONDITIONALS = word_set("if unless provided whenever")
COORDINATORS = word_set("and or but nor yet plus")
# Words that open a clause and are not part of its subject.
CONNECTIVES = word_set(
    """and or but nor yet so then thus hence therefore because although though whereas while since unless if
    when whenever once provided as which who whom whose that where after before until"""
)
# Modals of possibility: "Can it …?" asks what may be, not what is.
POSSIBILITY = word_set("can could may might")
# Conjunctive adverbs: set off by commas inside a clause ("The port, however, must …") they do not end it.
CONJUNCTIVE_ADVERBS = word_set(
    """however therefore moreover furthermore nevertheless nonetheless thus hence also instead indeed
    consequently accordingly likewise meanwhile besides though"""
)
# Clause-internal words before which a new clause starts (no punctuation needed).
CLAUSE_OPENERS = word_set("because although though whereas unless if while since but")
ADVERBS = word_set(
    """never always also only just then first now still usually often generally typically simply please
    already even again further finally next later soon instead otherwise really actually truly indeed ever
    definitely necessarily currently normally"""
)
# Adverbs a question may add that do not change what a statement must say.
EMPTY_ADVERBS = word_set("really actually truly indeed ever definitely necessarily currently still")
DETERMINERS = word_set(
    """the a an this that these those my our your its their his her each every any all both either neither
    no some another such"""
)
POSSESSIVES = word_set("its their his her my our your")
PREPOSITIONS = word_set(
    """of in on at by for with without from to into onto over under behind above below between among through
    during before after about against across along around beside besides beyond near per since toward
    towards upon within via than like unlike despite except"""
)
PRONOUNS = word_set("it they he she this these those them him her which who")
GENERIC_PERSONS = word_set(
    """i we you one someone somebody anyone anybody everyone everybody people user users customer customers
    owner owners operator operators person persons"""
)
HYPOTHETICAL_WORDS = word_set(
    "instead otherwise imagine suppose supposing hypothetical hypothetically counterfactual counterfactually"
)

# verbs that carry no action of their own ("how do I make X the default", "how do I get … back", "where is
# it kept?")
LIGHT_VERBS = frozenset({"be", "do", "get", "go", "have", "keep", "let", "make", "take", "use"})
LIGHT_STEMS = frozenset(stems(sorted(LIGHT_VERBS)))
