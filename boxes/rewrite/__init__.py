"""ASSIST's access-control policies (seed 002) and their enforcement by query rewriting.

It lives in ``boxes/`` because the rewriting is a transformation of a diagram's plan, as the
compiler is, and ``boxes/`` may not import ``catalog/``: the catalog will store these
policies and the server will hand them, with the deployer's attributes, to :func:`rewrite`.
Nothing here does I/O: ``policy`` is the model and its YAML form, ``xmlform`` the paper's
XML (Appendix B), ``predicates`` binds a policy's predicate to a subject and to a point of a
plan, ``rewriter`` the paper's two passes.
"""

from boxes.rewrite.policy import Policy, Subject, load_policies
from boxes.rewrite.rewriter import Rewritten, rewrite

__all__ = ["Policy", "Rewritten", "Subject", "load_policies", "rewrite"]
