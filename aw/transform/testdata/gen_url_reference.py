"""Writes url_reference.json: CPython's urlparse, as aw-core's
split_url_events uses it, on fixed and random URLs.

Run with CPython 3.11 (the recorded aw-server's): python3 gen_url_reference.py
"""
import json
import random
import sys
from urllib.parse import urlparse


def split(url):
    try:
        p = urlparse(url)
    except ValueError:
        return None
    if p.netloc:
        domain = p.netloc[4:] if p.netloc[:4] == "www." else p.netloc
    elif p.scheme:
        domain = p.scheme
    else:
        domain = ""
    return {"protocol": p.scheme, "domain": domain, "path": p.path, "params": p.params,
            "options": p.query, "identifier": p.fragment}


FIXED = [
    "http://asd.com/test/?a=1",
    "https://www.asd.asd.com/test/test2/meh;meh2?asd=2&asdf=3#id",
    "file:///home/johan/myfile.txt",
    "about:blank",
    "chrome://newtab/",
    "https://www.youtube.com/watch?v=jfKfPfyJRdk",
    "HTTPS://WWW.Example.COM:8443/a;b/c;d?e#f",
    "http://[::1]:8080/x",
    "http://[::ffff:1.2.3.4]/",
    "http://[fe80::1%25eth0]/",
    "http://[1.2.3.4]/",
    "http://[v1.abc]/",
    "http://[vz.abc]/",
    "http://[abc]/",
    "http://[::1/",
    "http://::1]/",
    "http://a[::1]/",
    " \x01\x1fhttp://x.com/p",
    "ht\ttp://x\n.com/p\r",
    "1http://x",
    "localhost:8080/x",
    "mailto:someone@example.com",
    "tel:+1-555;ext=1",
    "data:text/plain;base64,SGk=",
    "//host/only",
    "/path/only;p?q#f",
    "",
    ":",
    "a:",
    "www.example.com/path",
    "https://www./",
    "https://user:pw@www.example.com/",
    "http://example.com#frag?notquery",
    "http://example.com?q#f;g",
    "sftp://h/a;b",
    "s3://bucket/key;v",
    "https://例え.jp/パス?クエリ#フラグ",
    "http://x.com/a/b;c/d;e",
    "http://x.com;p",
]


def random_urls(rng, n):
    schemes = ["http", "https", "HTTP", "file", "about", "chrome-extension", "s3", "a+b.c-d", "1x", "", "moz-extension"]
    hosts = ["www.example.com", "example.com", "www.", "[::1]", "[::1", "::1]", "user@host:80", "", "x.y.z", "[v7.q]", "[1.2.3.4]"]
    pieces = ["/", ";", "?", "#", ":", "//", "a", "b/c", ";p=1", "?q=2", "#f", " ", "\t", "%20", "é", "[", "]", "@"]
    out = []
    for _ in range(n):
        s = rng.choice(schemes)
        u = (s + ":" if s else "") + rng.choice(["//", "", "/", "///"]) + rng.choice(hosts)
        for _ in range(rng.randrange(0, 6)):
            u += rng.choice(pieces)
        out.append(u)
    return out


def main():
    rng = random.Random(11)
    cases = [{"url": u, "want": split(u)} for u in FIXED + random_urls(rng, 400)]
    json.dump({"python": sys.version.split()[0], "cases": cases}, sys.stdout, ensure_ascii=False, indent=0)
    sys.stdout.write("\n")


main()
