"""Hand-made reference pages and the five synthetic pages stored under data/ for the reward tests."""

from __future__ import annotations

from pathlib import Path

DATA = Path(__file__).resolve().parent / "data" / "synth5"

REFERENCE = """## 2. Results of the survey

The survey covered forty-two farms in the northern valley between March and October. Yields were
measured by weight at the gate, and every farm reported its rainfall from the same kind of gauge.

$$
Y = \\frac{\\sum_{i=1}^{n} w_{i} y_{i}}{\\sum_{i=1}^{n} w_{i}}
$$

Table 3 lists the mean yield per crop; the variance $\\sigma^{2}$ is given in the last column.

<table>
<tr><th rowspan="2">Crop</th><th colspan="2">Yield</th><th>Variance</th></tr>
<tr><th>2019</th><th>2020</th><th>t/ha</th></tr>
<tr><td>Wheat</td><td>7.1</td><td>7.4</td><td>0.31</td></tr>
<tr><td>Barley</td><td>6.2</td><td>6.0</td><td>0.27</td></tr>
<tr><td>Oats</td><td>4.8</td><td>5.1</td><td>0.44</td></tr>
<tr><td>Rye</td><td>5.5</td><td>5.9</td><td>0.38</td></tr>
</table>

Farms that irrigated saw smaller variance, as expected from $\\mathrm{Var}(Y) \\leq \\mathbb{E}[Y^{2}]$.
The effect held for every crop except oats, where late frost in April reduced the harvest.

## 3. Discussion

Rainfall explains most of the difference between the two years. A wetter spring in 2020 raised the
yield of wheat and rye, while barley suffered from lodging after the storms of early July.
"""

PLAIN = """# Notes on the harbour

The harbour was rebuilt in 1874 after the great storm. Its new breakwater is four hundred metres long.

Ships now wait in the outer basin until the tide allows them through the lock gates.
"""

TESTS = [
    {"pdf": "survey.pdf", "page": 1, "id": "s_present_0", "type": "present", "text": "forty-two farms in the northern valley"},
    {"pdf": "survey.pdf", "page": 1, "id": "s_present_1", "type": "present", "text": "barley suffered from lodging"},
    {"pdf": "survey.pdf", "page": 1, "id": "s_order_0", "type": "order", "before": "Results of the survey", "after": "Discussion"},
    {"pdf": "survey.pdf", "page": 1, "id": "s_table_0", "type": "table", "cell": "6.0", "up": "7.4", "left": "6.2"},
    {"pdf": "survey.pdf", "page": 1, "id": "s_table_1", "type": "table", "cell": "Oats", "right": "4.8"},
    {"pdf": "survey.pdf", "page": 1, "id": "s_math_0", "type": "math", "math": "\\sigma^{2}"},
    {"pdf": "survey.pdf", "page": 1, "id": "s_absent_0", "type": "absent", "text": "Page 12"},
    {"pdf": "survey.pdf", "page": 1, "id": "s_baseline", "type": "baseline"},
]


def synth_pages() -> list[tuple[str, str, list]]:
    """(id, reference, tests) of the stored synthetic pages (made by `minuscule synth --seed 7`)."""
    from minuscule.rewards.study import load_synth

    return load_synth(DATA)
