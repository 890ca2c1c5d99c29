"""The attack pack: built-in hostile calls run against each tool of an agent, each judged by a
check that cannot be talked round (a planted canary or the system prompt's own text in the
answer, a refused tool attempted). ``metaagent test --attacks`` runs it (:mod:`.run`)."""
