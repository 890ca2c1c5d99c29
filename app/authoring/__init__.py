"""The studio's side of authoring with the model's help: drafts, grown cases, fixes."""
