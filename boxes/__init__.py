"""Box types, the diagram document, the expression language and labels.

This layer knows Spark but not Flask and not the catalog: it turns a validated diagram
document plus input DataFrames into labelled output DataFrames.
"""
