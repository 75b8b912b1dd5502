"""The pure core: documents, scanning, scoring, candidates, rendering and the plan state machine."""
