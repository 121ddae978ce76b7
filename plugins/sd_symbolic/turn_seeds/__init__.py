"""sd-symbolic's first job, detectSeeds: a user turn becomes Intent Groups and current-turn Context Units.

Entry point: `intents.detect_seeds`, which runs `detect` (a turn into intents and units) or `decompose`
(one intent into sub-intents). `turn` splits the turn into pieces, `acts` reads each question's act and
answer shape, `instructions` finds the cues that shape how to answer, `followups` resolves what a
pointing-back question refers to. Uses `..shared`, never
`..source_units`.
"""
