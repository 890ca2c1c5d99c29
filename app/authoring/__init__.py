"""The studio side of the authoring model: drafts, cases and fixes offered to the author."""
