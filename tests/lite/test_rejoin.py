"""rejoin_lines: pieces of one line split at a stretched word gap are joined, column and cell pieces are not."""

from __future__ import annotations

from minuscule.documents.types import Char, TextLine
from minuscule.lite.rejoin import rejoin_lines
from lite_lines import letter_chars


def piece(text: str, x0: float, y0: float, size: float = 10.0, adv: float | None = None, bold: bool = False) -> TextLine:
    """A text-layer line piece: one Char per letter with a fixed advance (0.5 em unless given); a space
    advances too and sets space_before on the next letter."""
    adv = 0.5 * size if adv is None else adv
    chars = letter_chars(text, x0, y0, size, adv, bold)
    x = x0 + adv * len(text)
    return TextLine(text, (x0, y0, x, y0 + size), size, bold=bold, chars=tuple(chars))


def texts(lines: list[TextLine]) -> list[str]:
    return sorted(ln.text for ln in lines)


def test_heading_split_at_a_stretched_word_gap_is_joined():
    """Two bold pieces 1.8 em apart with nothing lined up with the right one become one line "A B"."""
    a = piece("A", 100, 50, size=20, bold=True)
    b = piece("B", 100 + 10 + 36, 51, size=20, bold=True)  # A ends at 110; gap 36 px = 1.8 em
    body = [piece("Rivers carry nitrate from the fields", 100, 90 + 14 * k) for k in range(3)]
    out = rejoin_lines([a, b, *body])
    assert len(out) == 4
    joined = next(ln for ln in out if ln.bold)
    assert joined.text == "A B"
    assert joined.bbox == (100, 50, 156, 71)  # union of (100, 50, 110, 70) and (146, 51, 156, 71)
    assert [c.text for c in joined.chars] == ["A", "B"]
    assert [c.space_before for c in joined.chars] == [False, True]
    assert [c.bbox for c in joined.chars] == [a.chars[0].bbox, b.chars[0].bbox]
    assert [ln.text for ln in out if not ln.bold] == [ln.text for ln in body]


def test_joined_line_keeps_the_letters_spaces_of_both_pieces():
    """Only the first letter of the right piece gains space_before; the others keep theirs."""
    a = piece("Global Flow", 100, 50, size=20, bold=True)  # ends at 210
    b = piece("of Nitrate", 210 + 36, 50, size=20, bold=True)
    out = rejoin_lines([a, b])
    assert [ln.text for ln in out] == ["Global Flow of Nitrate"]
    chars = out[0].chars
    assert "".join(c.text for c in chars) == "GlobalFlowofNitrate"
    assert [k for k, c in enumerate(chars) if c.space_before] == [6, 10, 12]


def two_column_page() -> list[TextLine]:
    left = ["Rivers carry nitrate from the", "fields into the sea during the", "wet months of every year when",
            "the soils are bare and rain", "washes the nitrate out of it."]
    right = ["Samples were taken every", "two weeks at nine stations", "along the river and were", "analysed within two days",
             "of their collection."]
    lines = [piece(t, 60, 100 + 14 * k) for k, t in enumerate(left)]
    # The gutter is 1.5 em wide after the longest left line: narrower than a stretched heading gap.
    gutter_x = max(ln.bbox[2] for ln in lines) + 15
    lines += [piece(t, gutter_x, 100 + 14 * k) for k, t in enumerate(right)]
    return lines


def test_two_column_page_is_not_joined():
    """Right-column lines that all start at one x are a column: no left line is joined to them."""
    lines = two_column_page()
    gaps = [r.bbox[0] - l.bbox[2] for l, r in zip(lines[:5], lines[5:])]
    assert max(gaps) <= 3.0 * 10  # every pair is close enough to be joined if nothing anchored it
    out = rejoin_lines(lines)
    assert out == lines


def justified_heading(body_x1: float) -> list[TextLine]:
    """ "Seasonal" and "Transport" 4 em apart (60..100, 140..185), above two body lines ending at body_x1
    and a short last line."""
    a = piece("Seasonal", 60, 50)
    b = piece("Transport", 140, 50)
    words = "Loads of nitrate peaked in the late winter when wet soils met bare fields"
    n = round((body_x1 - 60) / 5)
    body = [piece(words[:n], 60, 70), piece(words[-n:], 60, 84), piece("across the catchment", 60, 98)]
    return [a, b, *body]


def test_two_word_justified_line_spanning_the_body_width_is_joined():
    """A 4 em gap is joined when the two pieces together span exactly what a body line below spans."""
    lines = justified_heading(185)
    assert lines[1].bbox[2] == lines[2].bbox[2] == 185 and lines[0].bbox[0] == lines[2].bbox[0]
    out = rejoin_lines(lines)
    assert len(out) == 4
    assert out[0].text == "Seasonal Transport"
    assert out[0].bbox == (60, 50, 185, 60)
    assert [c.space_before for c in out[0].chars].count(True) == 1 and out[0].chars[8].space_before


def test_two_word_line_with_a_4_em_gap_and_no_line_of_its_span_is_not_joined():
    """The same 4 em gap stays open when no other line spans from the left piece to the right one's end."""
    lines = justified_heading(155)  # body lines end 3 em short of "Transport"
    out = rejoin_lines(lines)
    assert texts(out) == texts(lines)
    assert "Seasonal Transport" not in [ln.text for ln in out]


def test_right_aligned_cells_of_a_borderless_table_are_not_joined():
    """Numbers right-aligned in a column (left edges and centres differ) anchor each other by their right edges."""
    rows = [("Hollbach weir", "12"), ("Weiden bridge", "12.4"), ("Upper Marten", "138.95")]
    right = 200.0
    lines = []
    for k, (label, value) in enumerate(rows):
        y = 100 + 14 * k
        lines.append(piece(label, 100, y))
        lines.append(piece(value, right - 5 * len(value), y))
    labels, values = lines[0::2], lines[1::2]
    # The construction: every value is within 3 em of its label, starts right of every label, and no two
    # values share a left edge or a centre (so only the right edge can anchor them).
    assert all(0 < v.bbox[0] - l.bbox[2] <= 30 for l, v in zip(labels, values))
    assert min(v.bbox[0] for v in values) > max(l.bbox[2] for l in labels)
    assert all(v.bbox[2] == right for v in values)
    for i, v in enumerate(values):
        for w in values[i + 1:]:
            assert abs(v.bbox[0] - w.bbox[0]) > 4 and abs((v.bbox[0] + v.bbox[2]) / 2 - (w.bbox[0] + w.bbox[2]) / 2) > 4
    out = rejoin_lines(lines)
    assert texts(out) == texts(lines)
    assert len(out) == 6


def test_pieces_of_different_sizes_are_not_joined():
    """With the text layer's 0.2 tolerance, a 20 px piece and a 14 px piece 1 em apart stay apart."""
    a = piece("Results", 100, 50, size=20, bold=True)  # ends at 170
    b = piece("and", 190, 53, size=14, bold=True)
    out = rejoin_lines([a, b], size_tol=0.2)
    assert texts(out) == ["Results", "and"]
    # the same pieces at one size are joined: only the size keeps them apart
    c = piece("and", 190, 50, size=20, bold=True)
    assert [ln.text for ln in rejoin_lines([a, c], size_tol=0.2)] == ["Results and"]
