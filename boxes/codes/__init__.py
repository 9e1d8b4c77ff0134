"""Every error code Sluice reports, declared once: its HTTP status and its message template.

As PySpark's error classes, a code is a stable name that tests and clients match on; the
message is rendered from the template's named parameters (``{name!r}``). A code is a ``str``
(it compares and serialises as its name) that also carries ``status``, ``template`` and
``group``. :func:`lookup` refuses a name nobody declared, and ``SluiceError`` calls it when an
error is built, so an unregistered code fails where it is raised, not in a client.

>>> NOT_FOUND == "NOT_FOUND", NOT_FOUND.status, NOT_FOUND.render(what="stream", name="in1")
(True, 404, "no stream named 'in1'")

The status is the answer's HTTP status when the code is an error's own code. A code that names
one problem of a document (``Problem``) travels inside ``DIAGRAM_INVALID`` (400).
``docs/errors.md`` is generated from this table: ``make errors-doc``.

Each group of :data:`GROUPS` has its module here, named after it (``catalog.py`` declares the
codes of group ``catalog``, in the order ``docs/errors.md`` lists them); ``registry.py`` holds
the machinery and ``reference.py`` renders the document.
"""

from boxes.codes.catalog import *
from boxes.codes.cql import *
from boxes.codes.document import *
from boxes.codes.expression import *
from boxes.codes.general import *
from boxes.codes.http import *
from boxes.codes.ingest import *
from boxes.codes.policy import *
from boxes.codes.reference import markdown as markdown
from boxes.codes.registry import GROUPS as GROUPS
from boxes.codes.registry import REGISTRY as REGISTRY
from boxes.codes.registry import Code as Code
from boxes.codes.registry import define as define
from boxes.codes.registry import in_group as in_group
from boxes.codes.registry import lookup as lookup
from boxes.codes.runtime import *
