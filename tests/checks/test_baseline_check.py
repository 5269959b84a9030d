"""baseline: blank-page variant, empty output, trailing repetition, disallowed characters."""

from minuscule.checks import parse_test, synthesized_baseline

BASE = {"pdf": "p.pdf", "page": 1, "id": "t", "type": "baseline"}


def baseline(**kw):
    return parse_test({**BASE, **kw})


def test_normal_text_passes():
    assert baseline().run("Some ordinary page text, 42.").passed


def test_no_alphanumeric_fails():
    r = baseline().run("--- \n\n ...")
    assert not r.passed and "no alphanumeric" in r.explanation


def test_trailing_repeats():
    assert baseline().run("text " + "-" * 30).passed
    r = baseline().run("text " + "-" * 31)
    assert not r.passed and "31" in r.explanation
    assert not baseline().run("text" + " ab" * 31).passed  # a 3-gram " ab"
    assert baseline().run("text" + " ab" * 31 + " end").passed  # only the very end counts
    assert baseline(max_repeats=50).run("text " + "-" * 31).passed


def test_disallowed_characters():
    for bad in ("漢", "ひ", "カ", "\U0001f600", "\U0001f680", "\U0001f1e6"):
        r = baseline().run("text " + bad)
        assert not r.passed and "disallowed" in r.explanation
    assert baseline(check_disallowed_characters=False).run("text 漢").passed
    assert baseline().run("Ελληνικά и русский текст").passed


def test_blank_page_variant_short_circuits():
    assert baseline(max_length=5).run("").passed
    assert baseline(max_length=5).run("abc 12").passed  # 5 alphanumerics: at the limit
    assert baseline(max_length=5).run("abc 123").passed is False
    assert baseline(max_length=5).run("-" * 100).passed  # repetition is not checked here
    img = "![a long alt text describing a figure](fig.png)"
    assert not baseline(max_length=5).run(img).passed
    assert baseline(max_length=5, max_length_skips_image_alt_tags=True).run(img).passed


def test_synthesized_baseline():
    t = synthesized_baseline("dir/x.pdf")
    assert (t.id, t.page, t.type, t.max_repeats) == ("dir/x.pdf_baseline", 1, "baseline", 30)
    assert t.to_json() == {"pdf": "dir/x.pdf", "page": 1, "id": "dir/x.pdf_baseline", "type": "baseline"}
