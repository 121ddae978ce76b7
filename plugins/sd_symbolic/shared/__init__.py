"""What sd-symbolic's two jobs (turn_seeds, source_units) share: KU roles from surface cues (`roles`),
topic phrases (`topics`) and (subject, relation, object) triples (`triples`). Imports neither job."""
