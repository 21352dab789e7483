"""The clause finder: learned from labelled contracts (cuad-train), read by both engines.

``features`` (what a passage says, pure), ``words`` (its terms as tf-idf, pure), ``rows`` (a document as
feature rows), ``model`` (the weights and what they compute, pure), ``training`` (the
``train_clause_finder`` command's work), ``runtime`` (the committed artifact applied to one document).
The artifact lives in ``artifact/``.
"""
