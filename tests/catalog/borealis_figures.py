"""The permission tables of the Borealis paper's Figures 8 to 10, as (object, role) pairs.

The paper's tables list, per object, the roles with access to it, without telling actions
apart. Two things the paper leaves out "for simplicity" are added and marked: CUSTOMER1's ADD
on the system (Al could not insert q1 without it) and the objects inside q1 (the diagram and
its boxes), which are compared separately.
"""

SYSTEM_ONLY = {("system", "ADMIN")}
JOE_ADDED = SYSTEM_ONLY | {("s", "ADMIN"), ("in1", "ADMIN"), ("in2", "ADMIN")}
JOE_GRANTED = (
    JOE_ADDED
    | {(o, r) for o in ("s", "in1", "in2") for r in ("CUSTOMER1", "INFO_PROVIDER")}
    | {("system", "CUSTOMER1")}
)  # not in the paper: ADD, needed for q1
AL_INSERTED = JOE_GRANTED | {("out1", "CUSTOMER1")}
BOB_GRANTED = AL_INSERTED | {("s", "CUSTOMER2"), ("in1", "CUSTOMER2"), ("out1", "CUSTOMER2")}

# The paper's source stream IDs: in1 is ...0001 and in2 is ...0010.
SOURCE_IDS = {"in1": 1, "in2": 2}
