"""RFC 6570 expansion (mcpgen_runtime/uri_template.py): the RFC's own examples, levels 1-4, hostile
values that must not change the URI's shape, and refused templates."""

from __future__ import annotations

import string

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mcpgen_runtime.uri_template import UriTemplateError, expand, parse

VALUES = {
    "count": ("one", "two", "three"),
    "dom": ("example", "com"),
    "dub": "me/too",
    "hello": "Hello World!",
    "half": "50%",
    "var": "value",
    "who": "fred",
    "base": "http://example.com/home/",
    "path": "/foo/bar",
    "list": ("red", "green", "blue"),
    "keys": {"semi": ";", "dot": ".", "comma": ","},
    "v": "6",
    "x": "1024",
    "y": "768",
    "empty": "",
    "empty_keys": {},
    "undef": None,
}

RFC_EXAMPLES = [
    ("{var}", "value"),
    ("{hello}", "Hello%20World%21"),
    ("{half}", "50%25"),
    ("O{empty}X", "OX"),
    ("O{undef}X", "OX"),
    ("{x,y}", "1024,768"),
    ("{x,hello,y}", "1024,Hello%20World%21,768"),
    ("?{x,empty}", "?1024,"),
    ("?{x,undef}", "?1024"),
    ("{var:3}", "val"),
    ("{var:30}", "value"),
    ("{list}", "red,green,blue"),
    ("{list*}", "red,green,blue"),
    ("{keys}", "semi,%3B,dot,.,comma,%2C"),
    ("{keys*}", "semi=%3B,dot=.,comma=%2C"),
    ("{+var}", "value"),
    ("{+hello}", "Hello%20World!"),
    ("{+half}", "50%25"),
    ("{base}index", "http%3A%2F%2Fexample.com%2Fhome%2Findex"),
    ("{+base}index", "http://example.com/home/index"),
    ("{+path}/here", "/foo/bar/here"),
    ("here?ref={+path}", "here?ref=/foo/bar"),
    ("{+path:6}/here", "/foo/b/here"),
    ("{+list}", "red,green,blue"),
    ("{+keys*}", "semi=;,dot=.,comma=,"),
    ("{#var}", "#value"),
    ("{#hello}", "#Hello%20World!"),
    ("{#half}", "#50%25"),
    ("foo{#empty}", "foo#"),
    ("foo{#undef}", "foo"),
    ("{#path:6}/here", "#/foo/b/here"),
    ("{#keys}", "#semi,;,dot,.,comma,,"),
    ("{.who}", ".fred"),
    ("{.who,who}", ".fred.fred"),
    ("{.half,who}", ".50%25.fred"),
    ("www{.dom*}", "www.example.com"),
    ("X{.var:3}", "X.val"),
    ("X{.list*}", "X.red.green.blue"),
    ("X{.keys*}", "X.semi=%3B.dot=..comma=%2C"),
    ("X{.empty_keys}", "X"),
    ("{/who}", "/fred"),
    ("{/half,who}", "/50%25/fred"),
    ("{/who,dub}", "/fred/me%2Ftoo"),
    ("{/var,x}/here", "/value/1024/here"),
    ("{/var:1,var}", "/v/value"),
    ("{/list*,path:4}", "/red/green/blue/%2Ffoo"),
    ("{;who}", ";who=fred"),
    ("{;half}", ";half=50%25"),
    ("{;empty}", ";empty"),
    ("{;v,empty,who}", ";v=6;empty;who=fred"),
    ("{;x,y,empty}", ";x=1024;y=768;empty"),
    ("{;list*}", ";list=red;list=green;list=blue"),
    ("{;keys}", ";keys=semi,%3B,dot,.,comma,%2C"),
    ("{;keys*}", ";semi=%3B;dot=.;comma=%2C"),
    ("{?who}", "?who=fred"),
    ("{?half}", "?half=50%25"),
    ("{?x,y}", "?x=1024&y=768"),
    ("{?x,y,empty}", "?x=1024&y=768&empty="),
    ("{?x,y,undef}", "?x=1024&y=768"),
    ("{?var:3}", "?var=val"),
    ("{?list}", "?list=red,green,blue"),
    ("{?list*}", "?list=red&list=green&list=blue"),
    ("{?keys}", "?keys=semi,%3B,dot,.,comma,%2C"),
    ("{?keys*}", "?semi=%3B&dot=.&comma=%2C"),
    ("?fixed=yes{&x}", "?fixed=yes&x=1024"),
    ("{&x,y,empty}", "&x=1024&y=768&empty="),
    ("{&list*}", "&list=red&list=green&list=blue"),
]


@pytest.mark.parametrize(("template", "expected"), RFC_EXAMPLES)
def test_rfc_6570_examples(template: str, expected: str) -> None:
    assert expand(template, VALUES) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("../etc/passwd", "file:///..%2Fetc%2Fpasswd"),
        ("a#frag", "file:///a%23frag"),
        ("a?q=1&r=2", "file:///a%3Fq%3D1%26r%3D2"),
        ("with space", "file:///with%20space"),
        ("ünï©ødé", "file:///%C3%BCn%C3%AF%C2%A9%C3%B8d%C3%A9"),
        ("100%", "file:///100%25"),
        ("%2F", "file:///%252F"),
        ("{x}", "file:///%7Bx%7D"),
        ("\r\nHost: evil", "file:///%0D%0AHost%3A%20evil"),
    ],
)
def test_hostile_values_cannot_change_the_uri_shape(value: str, expected: str) -> None:
    assert expand("file:///{path}", {"path": value}) == expected


def test_reserved_expansion_keeps_slashes_but_encodes_the_rest() -> None:
    assert expand("file:///{+path}", {"path": "a b/../ü#x"}) == "file:///a%20b/../%C3%BC#x"


def test_query_values_are_encoded_per_value() -> None:
    assert expand("s{?q,lang}", {"q": "a&b=c#d", "lang": None}) == "s?q=a%26b%3Dc%23d"


@pytest.mark.parametrize(
    "template",
    ["{", "}", "{}", "{a b}", "{=x}", "{|x}", "{x:0}", "{x:10000}", "a b", "a%zz", "a<b", "{x,}", "{.}"],
)
def test_invalid_templates_are_refused_with_a_position(template: str) -> None:
    with pytest.raises(UriTemplateError) as info:
        parse(template)
    assert info.value.position >= 0


def test_variables_in_order_of_first_use() -> None:
    parsed = parse("x://{a}/{+b}{?c,a}{&d*}")
    assert [v.name for v in parsed.variables] == ["a", "b", "c", "d"]
    assert parsed.operators("a") == {"", "?"}
    assert parsed.operators("c") == {"?"}


def test_differential_against_uritemplate_library() -> None:
    """The RFC examples against `uritemplate` (a dev dependency), mappings aside: that library
    sorts a mapping's keys, RFC 6570 keeps their order."""
    uritemplate = pytest.importorskip("uritemplate")
    values = {k: (list(v) if isinstance(v, tuple) else v) for k, v in VALUES.items() if v is not None}
    for template, _ in RFC_EXAMPLES:
        if "keys" in template:
            continue
        assert expand(template, values) == uritemplate.expand(template, values), template


OPERATOR_TEMPLATES = [
    "{x}",
    "{+x}",
    "{#x}",
    "{.x}",
    "{/x}",
    "{;x}",
    "{?x}",
    "{&x}",
    "{x:3}",
    "{+x:5}",
    "a{/x*}",
]


# What may stand in a URI (RFC 3986): unreserved, reserved, and `%` of a pct-encoded triplet.
URI_CHARACTERS = frozenset(string.ascii_letters + string.digits + "-._~:/?#[]@!$&'()*+,;=%")


@given(value=st.text(max_size=20))
@settings(max_examples=300, deadline=None)
def test_differential_on_any_string(value: str) -> None:
    uritemplate = pytest.importorskip("uritemplate")
    for template in OPERATOR_TEMPLATES:
        ours, theirs = expand(template, {"x": value}), uritemplate.expand(template, {"x": value})
        if set(theirs) <= URI_CHARACTERS:
            assert ours == theirs, (template, value)
        else:  # uritemplate 4.2.0 leaves a `{+x}`/`{#x}` value holding a %XX triplet unencoded
            assert set(ours) <= URI_CHARACTERS, (template, value, ours)


def test_reserved_expansion_encodes_what_a_uri_cannot_hold_beside_a_triplet() -> None:
    # hypothesis found uritemplate giving '"%00' (not a URI) here; RFC 6570 3.2.3 keeps only the triplet
    assert expand("{+x}", {"x": '"%00'}) == "%22%00"
    assert expand("{#x}", {"x": " %41"}) == "#%20%41"
