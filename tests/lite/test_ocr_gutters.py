"""split_at_gutters and _chars on OCR-like lines (letters with exact spaces); no OCR is run."""

from __future__ import annotations


from minuscule.documents.types import Char, TextLine
from minuscule.lite.ocr import _chars, split_at_gutters

SIZE = 20.0  # body line height = OCR size
ADV = 10.0  # letter advance of body text; letter boxes are ADV - 1 wide
WORDS = ("the data owner may choose which of the records are shared with a service and the service "
         "learns only what the policy allows it to see so that the context of each request decides "
         "whether a field is released or withheld while the audit log keeps every decision for review").split()


def letters(text: str, x: float, y0: float, size: float, adv: float, gap: float) -> list[Char]:
    """OCR letters of `text` from x: advance `adv`, a space adds `gap`; space_before marks word starts."""
    out, space = [], False
    for ch in text:
        if ch == " ":
            x, space = x + gap, True
            continue
        x0 = round(x, 3)  # justified gaps are fractions; keep the boxes' ends exact
        out.append(Char(ch, (x0, y0, x0 + adv - 1, y0 + size), size, space_before=space, exact_spaces=True))
        x, space = x + adv, False
    return out


def line_of(chars: list[Char], size: float) -> TextLine:
    text = "".join((" " if c.space_before else "") + c.text for c in chars)
    box = (chars[0].bbox[0], chars[0].bbox[1], max(c.bbox[2] for c in chars), chars[0].bbox[3])
    return TextLine(text, box, size, chars=tuple(chars))


def justified(words: list[str], x0: float, x1: float, y0: float) -> list[Char]:
    """Words set from x0 so that the last letter box ends at x1 (word gaps stretched equally)."""
    ink = sum(ADV * len(w) for w in words) - 1
    gap = (x1 - x0 - ink) / (len(words) - 1)
    return letters(" ".join(words), x0, y0, SIZE, ADV, gap)


def column_texts(n: int, width: float, start: int) -> list[list[str]]:
    """n lines of words that fit `width` with word gaps of at least 0.3 em, cycling through WORDS."""
    out, k = [], start
    for _ in range(n):
        line = [WORDS[k % len(WORDS)]]
        k += 1
        while ADV * (len("".join(line)) + len(WORDS[k % len(WORDS)])) + 0.3 * SIZE * len(line) <= width:
            line.append(WORDS[k % len(WORDS)])
            k += 1
        out.append(line)
    return out


def two_column_page(gutter: float) -> tuple[list[TextLine], int]:
    """A heading glued to the right column's first line (no space between "Contextually-" and "option"),
    then 19 justified lines in each column. Columns: 50..248 and 248+gutter..446+gutter.
    Returns the lines and the index of the glued line."""
    l0, l1 = 50.0, 248.0
    r0, r1 = l1 + gutter, l1 + gutter + 198
    head = letters("Contextually-", l0, 40, 24, 15, 0)  # larger heading letters, ends at 244
    rest = justified(["option", "protect", "the", "data"], r0, r1, 40)
    rest = [Char(c.text, (c.bbox[0], 40, c.bbox[2], 64), 24, space_before=c.space_before, exact_spaces=True) for c in rest]
    lines = [line_of(head + rest, 24)]
    for k, words in enumerate(column_texts(19, l1 - l0, 0)):
        lines.append(line_of(justified(words, l0, l1, 70 + 26 * k), SIZE))
    for k, words in enumerate(column_texts(19, r1 - r0, 7)):
        lines.append(line_of(justified(words, r0, r1, 70 + 26 * k), SIZE))
    return lines, 0


def test_heading_glued_across_a_narrow_gutter_is_cut_there():
    """Only the line that crosses a ~1 em gutter is cut, at the gutter, into the heading and the column's line."""
    lines, glued = two_column_page(gutter=24.0)
    assert lines[glued].text == "Contextually-option protect the data"
    out = split_at_gutters(lines)
    assert len(out) == len(lines) + 1
    left, right = out[0], out[1]
    assert left.text == "Contextually-"
    assert right.text == "option protect the data"
    assert left.bbox == (50.0, 40.0, 244.0, 64.0)
    assert right.bbox[0] == 272.0 and right.bbox[2] == lines[glued].bbox[2]
    assert right.chars[0].text == "o" and not right.chars[0].space_before
    assert [c.space_before for c in right.chars] == [c.space_before for c in lines[glued].chars[13:]]
    assert out[2:] == lines[1:]  # the other lines are untouched, boxes included


def title(text: str, centre_gap_on: float, word: int, y0: float = 10.0) -> TextLine:
    """A 24 px title line with normal word gaps (0.3 em) whose gap after word `word` is centred on x."""
    size, adv, gap = 24.0, 12.0, 0.3 * 24.0 + 1
    probe = letters(text, 0, y0, size, adv, gap)
    starts = [k for k, c in enumerate(probe) if c.space_before]
    k = starts[word]
    mid = (probe[k - 1].bbox[2] + probe[k].bbox[0]) / 2
    return line_of(letters(text, centre_gap_on - mid, y0, size, adv, gap), size)


def test_title_word_gap_at_a_wide_gutter_is_not_cut():
    """A full-width title whose normal word gap straddles a 2 em gutter's cut stays whole; the glued heading is cut."""
    lines, _ = two_column_page(gutter=40.0)
    head = title("Contextual Privacy for Shared Records", 268.0, 2)  # gutter 248..288, cut at 268
    gap = next((c.bbox[2], d.bbox[0]) for c, d in zip(head.chars, head.chars[1:])
               if d.space_before and c.bbox[2] <= 268 <= d.bbox[0])
    assert gap[1] - gap[0] < 0.5 * head.size and head.bbox[0] < 248 and head.bbox[2] > 288
    out = split_at_gutters([head, *lines])
    assert out[0] == head
    assert [ln.text for ln in out[1:3]] == ["Contextually-", "option protect the data"]
    assert len(out) == len(lines) + 2


def test_title_word_gap_at_a_narrow_gutter_is_not_cut():
    """A full-width title whose normal word gap straddles a ~1 em gutter's cut stays whole."""
    lines, _ = two_column_page(gutter=24.0)
    head = title("Contextual Privacy for Shared Records", 260.0, 2)  # gutter 248..272, cut at 260
    out = split_at_gutters([head, *lines])
    assert out[0] == head
    assert len(out) == len(lines) + 2


def test_list_numbers_near_the_left_edge_make_no_gutter():
    """Wide gaps after "1." … "6." line up near the left edge; they are list numbers, not a gutter."""
    items = ["the owner chooses the records", "a service asks for a field", "the policy decides each request",
             "the answer is logged for review", "withheld fields stay hidden", "every decision can be audited"]
    lines = []
    for k, item in enumerate(items):
        y0 = 50 + 26 * k
        number = letters(f"{k + 1}.", 50, y0, SIZE, ADV, 0)  # ends at 69
        body = letters(item, 100, y0, SIZE, ADV, 7)  # 1.5 em after the number, 0.3 em word gaps
        body[0] = Char(body[0].text, body[0].bbox, SIZE, space_before=True, exact_spaces=True)
        lines.append(line_of(number + body, SIZE))
    assert lines[0].text == "1. the owner chooses the records"
    out = split_at_gutters(lines)
    assert out == lines
    assert [ln.bbox[0] for ln in out] == [50.0] * 6


def test_chars_maps_one_box_per_letter_and_spaces_from_the_text():
    """With a box per non-space letter, each letter gets its box's x extent (scaled) and the line's y extent."""
    bbox = (20.0, 100.0, 120.0, 120.0)
    xs = [(10, 14), (15, 19), (24, 28), (29, 33)]  # in OCR input pixels; scale 2 → page pixels
    boxes = [(ch, 0.9, [[a, 50], [b, 50], [b, 60], [a, 60]]) for ch, (a, b) in zip("abcd", xs)]
    chars = _chars("ab cd", boxes, 2.0, bbox)
    assert [c.text for c in chars] == ["a", "b", "c", "d"]
    assert [c.bbox for c in chars] == [(20.0, 100.0, 28.0, 120.0), (30.0, 100.0, 38.0, 120.0),
                                       (48.0, 100.0, 56.0, 120.0), (58.0, 100.0, 66.0, 120.0)]
    assert [c.space_before for c in chars] == [False, False, True, False]
    assert all(c.exact_spaces and c.size == 20.0 for c in chars)


def test_chars_spreads_the_line_box_when_box_count_differs():
    """With fewer boxes than letters, the line's box is shared out evenly over all characters, spaces included."""
    bbox = (0.0, 10.0, 50.0, 30.0)
    boxes = [("ab", 0.9, [[0, 5], [10, 5], [10, 15], [0, 15]]), ("cd", 0.9, [[12, 5], [25, 5], [25, 15], [12, 15]])]
    chars = _chars("ab cd", boxes, 1.0, bbox)
    assert [c.text for c in chars] == ["a", "b", "c", "d"]
    assert [c.bbox for c in chars] == [(0.0, 10.0, 10.0, 30.0), (10.0, 10.0, 20.0, 30.0),
                                       (30.0, 10.0, 40.0, 30.0), (40.0, 10.0, 50.0, 30.0)]
    assert [c.space_before for c in chars] == [False, False, True, False]
    assert all(c.exact_spaces for c in chars)
