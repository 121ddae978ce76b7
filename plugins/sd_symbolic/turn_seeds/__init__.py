"""sd-symbolic's first job, detectSeeds: a user turn becomes Intent Groups and current-turn Context Units.

Entry point: `intents.detect_seeds`. `turn` splits the turn into pieces, `acts` reads each question's
act and answer shape, `instructions` finds the cues that shape how to answer. Uses `..shared`, never
`..source_units`.
"""
