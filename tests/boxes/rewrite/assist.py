"""The paper's scenario (seed 002): Table 2's streams, roles, policies and subjects."""

from __future__ import annotations

import datetime as dt
from typing import Any

from boxes.document import Plan, validate
from boxes.rewrite import Subject, load_policies
from boxes.types import parse_schema

AIS = {
    "fields": {
        "SID": "long",
        "Name": "string",
        "Type": "string",
        "Long": "double",
        "Lat": "double",
        "T": "timestamp",
    },
    "event_time": "T",
}
ROUTE = {
    "fields": {
        "SID": "long",
        "next_leg": "string",
        "free_load": "long",
        "ETA": "timestamp",
        "T": "timestamp",
    },
    "event_time": "T",
}
STREAMS = {name: parse_schema(spec, name)[0] for name, spec in (("AIS", AIS), ("Route", ROUTE))}

# Location(SID) in PortBound(self), Distance(SID, self) <= N miles: until the geography
# functions land, a port's boundary is a box and distance a flat-earth approximation
# (nautical miles: 60 per degree).
IN_PORT = (
    "{s}Long BETWEEN self.port_west AND self.port_east "
    "AND {s}Lat BETWEEN self.port_south AND self.port_north"
)
DISTANCE = "sqrt(power(Long - self.lon, 2) + power(Lat - self.lat, 2)) * 60"
TABLE2 = f"""
policies:
  - name: port-read
    role: port authority
    streams: {{AIS: "*"}}
    where: "{IN_PORT.format(s="")}"
    privilege: read
  - name: port-count
    role: port authority
    streams: {{AIS: [SID]}}
    where: "{DISTANCE} <= 50"
    privilege: count
    window: {{size: 10m, step: 10m}}
  - name: port-join
    role: port authority
    streams: {{AIS: "*", Route: "*"}}
    where: "AIS.SID = Route.SID AND {IN_PORT.format(s="AIS.")}"
    privilege: join
  - name: company-read
    role: ship company
    streams: {{AIS: "*"}}
    where: "SID IN (self.ships)"
    privilege: read
  - name: captain-near
    role: ship captain
    streams: {{AIS: [SID, Long, Lat]}}
    where: "{DISTANCE} <= 200"
    privilege: read
  - name: captain-emergency
    role: ship captain
    streams: {{AIS: "*"}}
    where: "SID IN (self.emergency_ships)"
    privilege: read
    during: {{start: self.emergency_start, end: self.emergency_end}}
"""
POLICIES = load_policies(TABLE2)
# Singapore: the port is a box around the Strait; the captain's ship sits in it.
PORT = Subject(
    frozenset({"port authority"}),
    {
        "port_west": 103.6,
        "port_east": 104.1,
        "port_south": 1.15,
        "port_north": 1.35,
        "lon": 103.85,
        "lat": 1.25,
    },
)
COMPANY = Subject(frozenset({"ship company"}), {"ships": [563001, 563002]})
CAPTAIN = Subject(
    frozenset({"ship captain"}),
    {
        "lon": 103.8,
        "lat": 1.2,
        "emergency_ships": [563009],
        "emergency_start": dt.datetime(2013, 2, 1, 10, 0),
        "emergency_end": dt.datetime(2013, 2, 1, 12, 0),
    },
)


def diagram(boxes: dict[str, Any], outputs: dict[str, Any], *inputs: str) -> dict[str, Any]:
    """A server-style document over the catalog streams ``inputs``."""
    return {
        "version": 1,
        "name": "q",
        "inputs": {name: {} for name in inputs},
        "boxes": boxes,
        "outputs": outputs,
    }


def plan_of(doc: dict[str, Any]) -> Plan:
    return validate(doc, streams={n: STREAMS[n] for n in doc["inputs"]})


# Appendix A's streams and Appendix B's catalog, as printed (the join policy's closing tags,
# split across the report's pages, joined once).
AIS_GPS = {
    "fields": {
        "MMSI": "long",
        "Longitude": "double",
        "Latitude": "double",
        "Emergency": "boolean",
        "T": "timestamp",
    },
    "event_time": "T",
}
ROUTE_STREAM = {
    "fields": {"MMSI": "long", "Next_leg": "string", "Free_load": "long", "T": "timestamp"},
    "event_time": "T",
}
APPENDIX_STREAMS = {
    name: parse_schema(spec, name)[0]
    for name, spec in (("AisGpsStream", AIS_GPS), ("RouteStream", ROUTE_STREAM))
}
METHODS = {
    "IsWithinPortBound": "{0} BETWEEN self.port_west AND self.port_east "
    "AND {1} BETWEEN self.port_south AND self.port_north",
    "DistanceFromSelf": "sqrt(power({0} - self.lon, 2) + power({1} - self.lat, 2)) * 60",
    "BelongsToCompany": "{0} IN (self.ships)",
    "HasAnEmergency": "{0}",
}
APPENDIX_B = """<?xml version="1.0"?>
<root>
  <role name="Port Authority">
    <policy>
      <inputstream name="AisGpsStream" attributes="*" />
      <predicate>
        <method name="IsWithinPortBound">
          <attribute inputstream="AisGpsStream" name="Longitude" />
          <attribute inputstream="AisGpsStream" name="Latitude" />
        </method>
      </predicate>
      <privilege value="read" />
    </policy>
    <policy>
      <inputstream name="AisGpsStream" attributes="*" />
      <predicate>
        <lessthan>
          <method name="DistanceFromSelf">
            <attribute inputstream="AisGpsStream" name="Longitude" />
            <attribute inputstream="AisGpsStream" name="Latitude" />
          </method>
          <litteral type="double" value="50.0" />
        </lessthan>
      </predicate>
      <privilege value="aggregate">
        <wtc units="seconds" minsize="600" minhop="600" />
      </privilege>
    </policy>
    <policy>
      <inputstream name="AisGpsStream" attributes="*" />
      <inputstream name="RouteStream" attributes="*" />
      <predicate>
        <bool_and>
          <equals>
            <attribute inputstream="AisGpsStream" name="MMSI" />
            <attribute inputstream="RouteStream" name="MMSI" />
          </equals>
          <method name="IsWithinPortBound">
            <attribute inputstream="AisGpsStream" name="Longitude" />
            <attribute inputstream="AisGpsStream" name="Latitude" />
          </method>
        </bool_and>
      </predicate>
      <privilege value="join"/>
      <gtc/>
    </policy>
  </role>
  <role name="Ship Company">
    <policy>
      <inputstream name="AisGpsStream" attributes="*" />
      <predicate>
        <method name="BelongsToCompany">
          <attribute inputstream="AisGpsStream" name="MMSI" />
        </method>
      </predicate>
      <privilege value="read"/>
      <gtc/>
    </policy>
  </role>
  <role name="Ship Captain">
    <policy>
      <inputstream name="AisGpsStream" attributes="MMSI,Longitude,Latitude" />
      <predicate>
        <lessthan>
          <method name="DistanceFromSelf">
            <attribute inputstream="AisGpsStream" name="Longitude" />
            <attribute inputstream="AisGpsStream" name="Latitude" />
          </method>
          <litteral type="double" value="200.0" />
        </lessthan>
      </predicate>
      <privilege value="read"/>
      <gtc/>
    </policy>
    <policy>
      <inputstream name="AisGpsStream" attributes="*" />
      <predicate>
        <method name="HasAnEmergency">
          <attribute inputstream="AisGpsStream" name="Emergency" />
        </method>
      </predicate>
      <privilege value="read"/>
      <gtc start="Emergency.start" end="Emergency.stop" />
    </policy>
  </role>
</root>
"""
# Appendix A's query (Figure 5) as a diagram: Source.0/1 are the two streams, Join.0 joins
# them on MMSI (within an hour: the paper's one-hour windows), Filter.0 keeps ships bound for
# Los Angeles with more than 10 containers free.
APPENDIX_A = {
    "version": 1,
    "name": "appendix_a",
    "inputs": {"AisGpsStream": {}, "RouteStream": {}},
    "boxes": {
        "Join0": {
            "type": "join",
            "left": "AisGpsStream",
            "right": "RouteStream",
            "on": ["MMSI"],
            "within": "1h",
        },
        "Filter0": {
            "type": "filter",
            "in": "Join0",
            "where": "Next_leg = 'Los Angeles' AND Free_load > 10",
        },
    },
    "outputs": {"OutputAdapter": {"from": "Filter0"}},
}
