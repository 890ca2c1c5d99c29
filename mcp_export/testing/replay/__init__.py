"""Record and replay of test cases, and their mocked tools (``metaagent test --record/--replay``).

``fixture`` is the file a case's recording lives in; ``tape`` the recording and replaying
stand-ins of the provider and toolbox; ``mocks`` a case's mocked tools and faults; ``switch`` the
per-model server whose calls each answer with the calling case's stand-ins; ``cases`` runs a case
with them.
"""
