"""Random LaTeX formulas that KaTeX renders: fractions, sums and integrals with limits, matrices, cases, accents."""

from __future__ import annotations

import random

GREEK = ["\\alpha", "\\beta", "\\gamma", "\\delta", "\\epsilon", "\\theta", "\\lambda", "\\mu", "\\nu",
         "\\xi", "\\pi", "\\rho", "\\sigma", "\\tau", "\\phi", "\\chi", "\\psi", "\\omega", "\\eta", "\\kappa"]
GREEK_UPPER = ["\\Gamma", "\\Delta", "\\Theta", "\\Lambda", "\\Sigma", "\\Phi", "\\Psi", "\\Omega"]
LATIN = list("abcdfghkmnpqrstuvwxyz") + list("ABCFGHKLMNPQRSTUVWXZ")
INDICES = list("ijkmn") + ["t", "0", "1", "2"]
ACCENTS = ["\\hat", "\\tilde", "\\bar", "\\vec", "\\dot", "\\overline", "\\widehat"]
FUNCS = ["\\sin", "\\cos", "\\exp", "\\log", "\\ln", "\\tanh"]
RELATIONS = ["=", "=", "=", "\\leq", "\\geq", "\\approx", "\\neq", "<", ">", "\\equiv", "\\propto"]
BINOPS = ["+", "-", "+", "\\cdot", "\\times", "-", "\\pm"]
SETS = ["\\mathbb{R}", "\\mathbb{N}", "\\mathbb{Z}", "\\mathbb{C}", "\\mathbb{R}^{n}", "\\mathbb{R}^{d}"]
CALLIG = ["\\mathcal{L}", "\\mathcal{O}", "\\mathcal{F}", "\\mathcal{H}", "\\mathcal{N}"]


class FormulaMaker:
    """Builds formulas from a seeded `random.Random`, so a page seed fixes every formula."""

    def __init__(self, rng: random.Random):
        self.rng = rng

    def symbol(self) -> str:
        r = self.rng.random()
        if r < 0.55:
            return self.rng.choice(LATIN)
        if r < 0.9:
            return self.rng.choice(GREEK)
        return self.rng.choice(GREEK_UPPER)

    def number(self) -> str:
        r = self.rng.random()
        if r < 0.5:
            return str(self.rng.randint(1, 9))
        if r < 0.8:
            return str(self.rng.randint(10, 99))
        return f"{self.rng.randint(0, 9)}.{self.rng.randint(1, 99):02d}"

    def atom(self, depth: int) -> str:
        rng = self.rng
        r = rng.random()
        base = self.symbol()
        if r < 0.3:
            return f"{base}_{{{rng.choice(INDICES)}}}"
        if r < 0.45:
            return f"{base}^{{{rng.randint(2, 3)}}}"
        if r < 0.55:
            return f"{rng.choice(ACCENTS)}{{{rng.choice(LATIN)}}}"
        if r < 0.65:
            return self.number()
        if r < 0.72 and depth < 2:
            return f"{rng.choice(FUNCS)}\\left({self.expr(depth + 1, 2)}\\right)"
        if r < 0.8 and depth < 2:
            return f"\\frac{{{self.expr(depth + 1, 2)}}}{{{self.expr(depth + 1, 2)}}}"
        if r < 0.85 and depth < 2:
            return f"\\sqrt{{{self.expr(depth + 1, 2)}}}"
        if r < 0.9 and depth < 2:
            return f"\\left({self.expr(depth + 1, 3)}\\right)^{{{rng.randint(2, 3)}}}"
        return base

    def expr(self, depth: int = 0, max_terms: int = 4) -> str:
        n = self.rng.randint(1, max_terms)
        out = self.atom(depth)
        for _ in range(n - 1):
            out += f" {self.rng.choice(BINOPS)} {self.atom(depth)}"
        return out

    def lhs(self) -> str:
        rng = self.rng
        r = rng.random()
        if r < 0.35:
            return f"{rng.choice(LATIN)}({rng.choice(['x', 't', 'z', 'n', 'x, y'])})"
        if r < 0.5:
            return rng.choice(CALLIG) + (f"({self.symbol()})" if rng.random() < 0.5 else "")
        if r < 0.65:
            return f"\\frac{{\\partial {rng.choice(LATIN)}}}{{\\partial {rng.choice(['x', 't', 'y'])}}}"
        return self.atom(1)

    def display(self) -> str:
        """One display formula; the mix favours structures that are hard to transcribe."""
        kind = self.rng.choices(
            ["equation", "sum", "integral", "matrix", "cases", "limit", "product", "aligned", "norm", "set"],
            weights=[3, 2, 2, 1.2, 1.2, 0.8, 0.6, 0.8, 0.8, 0.6],
        )[0]
        return getattr(self, f"_{kind}")()

    def inline(self) -> str:
        """A short formula that sits inside a sentence."""
        rng = self.rng
        r = rng.random()
        if r < 0.25:
            return f"{self.symbol()}_{{{rng.choice(INDICES)}}}"
        if r < 0.45:
            return f"{self.symbol()} {rng.choice(RELATIONS)} {self.number()}"
        if r < 0.6:
            return f"{self.symbol()} \\in {rng.choice(SETS)}"
        if r < 0.7:
            return "\\mathcal{O}(" + rng.choice(["n", "n^{2}", "n \\log n", "k d"]) + ")"
        if r < 0.85:
            return f"\\frac{{{self.atom(2)}}}{{{self.atom(2)}}}"
        return self.expr(2, 2)

    def _equation(self) -> str:
        return f"{self.lhs()} {self.rng.choice(RELATIONS)} {self.expr(0, 4)}"

    def _sum(self) -> str:
        i = self.rng.choice(["i", "k", "j", "n"])
        upper = self.rng.choice(["N", "n", "\\infty", "K", "m"])
        body = f"{self.symbol()}_{{{i}}}" + (f"^{{{self.rng.randint(2, 3)}}}" if self.rng.random() < 0.4 else "")
        if self.rng.random() < 0.5:
            body = f"\\frac{{{body}}}{{{self.atom(1)}}}"
        return f"{self.lhs()} = \\sum_{{{i}=1}}^{{{upper}}} {body}"

    def _integral(self) -> str:
        var = self.rng.choice(["x", "t", "s", "u"])
        lo, hi = self.rng.choice([("0", "\\infty"), ("-\\infty", "\\infty"), ("0", "1"), ("a", "b"), ("0", "T")])
        inner = self.expr(1, 3).replace("x", var) if self.rng.random() < 0.3 else self.expr(1, 3)
        return f"{self.lhs()} = \\int_{{{lo}}}^{{{hi}}} {inner} \\, d{var}"

    def _matrix(self) -> str:
        env = self.rng.choice(["pmatrix", "bmatrix", "vmatrix"])
        n = self.rng.randint(2, 3)
        m = self.rng.randint(2, 3)
        rows = [" & ".join(self.atom(2) for _ in range(m)) for _ in range(n)]
        name = self.rng.choice(["A", "M", "\\Sigma", "J", "W"])
        return f"{name} = \\begin{{{env}}} " + " \\\\ ".join(rows) + f" \\end{{{env}}}"

    def _cases(self) -> str:
        var = self.rng.choice(["x", "t", "n"])
        a, b = self.number(), self.number()
        return (f"{self.rng.choice(LATIN)}({var}) = \\begin{{cases}} {self.expr(1, 2)} & {var} < {a} \\\\ "
                f"{self.expr(1, 2)} & {var} \\geq {b} \\end{{cases}}")

    def _limit(self) -> str:
        var = self.rng.choice(["n", "x", "h"])
        to = self.rng.choice(["\\infty", "0"])
        return f"\\lim_{{{var} \\to {to}}} {self.expr(1, 2)} = {self.atom(1)}"

    def _product(self) -> str:
        i = self.rng.choice(["i", "k"])
        upper = self.rng.choice(["n", "N", "K"])
        return f"{self.lhs()} = \\prod_{{{i}=1}}^{{{upper}}} \\left(1 + {self.symbol()}_{{{i}}}\\right)"

    def _aligned(self) -> str:
        a = self.lhs()
        return (f"\\begin{{aligned}} {a} &= {self.expr(1, 3)} \\\\ &= {self.expr(1, 3)} \\end{{aligned}}")

    def _norm(self) -> str:
        v = self.rng.choice(["x", "v", "w", "u"])
        p = self.rng.choice(["2", "p", "1"])
        return f"\\left\\| {v} \\right\\|_{{{p}}} {self.rng.choice(RELATIONS)} {self.expr(1, 3)}"

    def _set(self) -> str:
        v = self.rng.choice(["x", "y", "z"])
        return f"S = \\left\\{{ {v} \\in {self.rng.choice(SETS)} : {self.expr(2, 2)} \\leq {self.number()} \\right\\}}"
