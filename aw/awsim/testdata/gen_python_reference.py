#!/usr/bin/env python3
"""Writes python_reference.json: what CPython answers for the Python
behaviours awsim reimplements, so the Go ports are tested against the real
thing rather than against themselves.

Run from this directory with any CPython 3.11+:  python3 gen_python_reference.py

Only the standard library is used. parse_date is pyiso8601's (the version
aw-core pins), copied verbatim apart from the FixedOffset helper; the
difflib rules list mirrors awsim's difflib.go (flask-restx's 404 help).
"""
import datetime
import difflib
import json
import random
import re
import struct
from decimal import Decimal

ISO8601_REGEX = re.compile(
    r"""
    (?P<year>[0-9]{4})
    (
        (
            (-(?P<monthdash>[0-9]{1,2}))
            |
            (?P<month>[0-9]{2})
            (?!$)  # Don't allow YYYYMM
        )
        (
            (
                (-(?P<daydash>[0-9]{1,2}))
                |
                (?P<day>[0-9]{2})
            )
            (
                (
                    (?P<separator>[ T])
                    (?P<hour>[0-9]{2})
                    (:{0,1}(?P<minute>[0-9]{2})){0,1}
                    (
                        :{0,1}(?P<second>[0-9]{1,2})
                        ([.,](?P<second_fraction>[0-9]+)){0,1}
                    ){0,1}
                    (?P<timezone>
                        Z
                        |
                        (
                            (?P<tz_sign>[-+])
                            (?P<tz_hour>[0-9]{2})
                            :{0,1}
                            (?P<tz_minute>[0-9]{2}){0,1}
                        )
                    ){0,1}
                ){0,1}
            )
        ){0,1}  # YYYY-MM
    ){0,1}  # YYYY only
    $
    """,
    re.VERBOSE,
)
UTC = datetime.timezone.utc
EPOCH = datetime.datetime(1970, 1, 1, tzinfo=UTC)


def parse_timezone(matches):
    tz = matches.get("timezone", None)
    if tz == "Z" or tz is None:
        return UTC
    sign = matches.get("tz_sign", None)
    hours = int(matches.get("tz_hour", 0))
    minutes = int(matches.get("tz_minute", 0))
    if sign == "-":
        hours, minutes = -hours, -minutes
    return datetime.timezone(datetime.timedelta(hours=hours, minutes=minutes))


def parse_date(s):
    m = ISO8601_REGEX.match(s)
    if not m:
        raise ValueError("no match")
    groups = {k: v for k, v in m.groupdict().items() if v is not None}
    return datetime.datetime(
        year=int(groups.get("year", 0)),
        month=int(groups.get("month", groups.get("monthdash", 1))),
        day=int(groups.get("day", groups.get("daydash", 1))),
        hour=int(groups.get("hour", 0)),
        minute=int(groups.get("minute", 0)),
        second=int(groups.get("second", 0)),
        microsecond=int(Decimal(f"0.{groups.get('second_fraction', 0)}") * Decimal("1000000.0")),
        tzinfo=parse_timezone(groups),
    )


def iso_case(s):
    try:
        d = parse_date(s)
        us = (d.astimezone(UTC) - EPOCH) // datetime.timedelta(microseconds=1)
        return {"in": s, "ok": True, "us": us, "off": int(d.utcoffset().total_seconds() // 60),
                "iso": d.isoformat()}
    except Exception:
        return {"in": s, "ok": False}


def iso_inputs(rng):
    out = set()
    alpha = "0123456789-:T Z+.,\nx"
    for _ in range(300):
        out.add("".join(rng.choice(alpha) for _ in range(rng.randint(0, 26))))
    for _ in range(600):
        p = [rng.choice(["2026", "0001", "9999", "0000", "1970"])]
        if rng.random() < 0.9:
            p.append(rng.choice(["-11", "-1", "11", "-13", "02", "-00"]))
            if rng.random() < 0.9:
                p.append(rng.choice(["-22", "-2", "22", "-31", "29", "-30", "-00"]))
                if rng.random() < 0.9:
                    p.append(rng.choice(["T", " "]))
                    p.append(rng.choice(["01", "23", "24"]))
                    if rng.random() < 0.8:
                        p.append(rng.choice([":35", "35", ":60", ":5"]))
                    if rng.random() < 0.8:
                        p.append(rng.choice([":21", "21", ":59", ":60", ":7"]))
                    if rng.random() < 0.6:
                        p.append(rng.choice([".123456", ".5", ",25", ".1234567", "." + "9" * 28, "." + "9" * 29,
                                             "." + "1234569" + "9" * 22, ".000000000000000000001", "."]))
                    if rng.random() < 0.7:
                        p.append(rng.choice(["Z", "+00:00", "+02:00", "-05:30", "+0530", "+05", "-23:59",
                                             "+24:00", "+23:99", "z"]))
        if rng.random() < 0.05:
            p.append("\n")
        out.add("".join(p))
    return sorted(out)


def float_cases(rng):
    vals = [88.0, 180.001, 1325.0, 0.25, 1.5, 1e16, 1e15, 9999999999999998.0, 1e-4, 1e-5, 0.0001234,
            123456789012345680.0, 5e-324, 1.7976931348623157e308, -0.0, 0.0, 0.1, 1e22, 1e21, 3599.0, 91.0]
    for _ in range(400):
        k = rng.random()
        if k < 0.4:
            f = struct.unpack("d", struct.pack("Q", rng.getrandbits(64)))[0]
        elif k < 0.7:
            f = rng.uniform(-1e6, 1e6)
        else:
            f = round(rng.uniform(0, 100000), rng.randint(0, 6))
        if f == f and f not in (float("inf"), float("-inf")):
            vals.append(f)
    return [{"hex": f.hex(), "repr": repr(f)} for f in vals]


def string_cases(rng):
    chars = ["a", '"', "\\", "\n", "\t", "\x00", "\x7f", "é", "—", "·", "😀", "\u2028", "'", "\x1f", "\ufeff", "\x85", "\xa0"]
    out = []
    for _ in range(200):
        s = "".join(rng.choice(chars) for _ in range(rng.randint(0, 8)))
        out.append({"s": s, "dumps": json.dumps(s), "repr": repr(s)})
    return out


AW_RULES = ["/<path:filename>", "/", "/swaggerui/<path:filename>", "/api/", "/api/swagger.json", "/api/0/info",
            "/api/0/buckets/", "/api/0/buckets/<string:bucket_id>", "/api/0/buckets/<string:bucket_id>/events",
            "/api/0/buckets/<string:bucket_id>/events/count",
            "/api/0/buckets/<string:bucket_id>/events/<int:event_id>",
            "/api/0/buckets/<string:bucket_id>/heartbeat", "/api/0/query/", "/api/0/export",
            "/api/0/buckets/<string:bucket_id>/export", "/api/0/import", "/api/0/log", "/api/0/settings",
            "/api/0/settings/<string:key>"]


def path_cases(rng):
    rules = dict((re.sub("(<.*>)", "", r), r) for r in AW_RULES)
    paths = []
    for i in ["x", "aw-watcher-window_nosuchhost", "aw-watcher-afk_testhost", "b" * 250, "ééé",
              "aw-watcher-web-chrome_some-very-long-hostname.example.com"]:
        for suf in ["", "/events", "/heartbeat", "/events/count", "/events/12", "/export"]:
            paths.append("/api/0/buckets/" + i + suf)
    for _ in range(100):
        paths.append("/api/0/buckets/" + "".join(rng.choice("abc/e_-vnts") for _ in range(rng.randint(1, 40)))
                     + rng.choice(["", "/events", "/heartbeat"]))
    return [{"path": p, "help": " or ".join(rules[m] for m in difflib.get_close_matches(p, rules.keys()))}
            for p in paths]


def int_cases():
    out = []
    for s in ["0", "-1", "+5", " 7 ", "1_000", "1__0", "_1", "1_", "abc", "", "-", "99999999999999999999",
              "\t12\n", "0x10", "1.0", "007", "-0", "\x1c3\x1f"]:
        try:
            v = int(s)
            ok = -(2 ** 63) <= v < 2 ** 63  # SQLite's LIMIT takes an int64
            out.append({"s": s, "ok": ok, "v": v if ok else 0})
        except ValueError:
            out.append({"s": s, "ok": False, "v": 0})
    return out


def pyfloat_cases():
    out = []
    for s in ["2", "2.0", " 185.0 ", "1e3", "-1.5", "inf", "-Infinity", "nan", "1_0.5", "1__0", "0x10", "",
              "abc", "1e", ".5", "5.", "1_e5", "+.5e-3"]:
        try:
            f = float(s)
            out.append({"s": s, "ok": True, "repr": repr(f)})
        except ValueError:
            out.append({"s": s, "ok": False, "repr": ""})
    return out


def main():
    rng = random.Random(20261122)
    ref = {
        "python": __import__("sys").version.split()[0],
        "iso": [iso_case(s) for s in iso_inputs(rng)],
        "floats": float_cases(rng),
        "strings": string_cases(rng),
        "paths": path_cases(rng),
        "ints": int_cases(),
        "pyfloats": pyfloat_cases(),
    }
    with open("python_reference.json", "w", encoding="utf-8") as f:
        json.dump(ref, f, ensure_ascii=True, indent=0)
        f.write("\n")


if __name__ == "__main__":
    main()
