"""Dense verifiable rewards for GRPO: deterministic terms graded in [0, 1], floored and multiplied.

    breakdown = score(prediction_md, reference_md, tests)   # RewardBreakdown
    breakdown.reward, breakdown.terms["table"].raw, breakdown.notes
"""

from minuscule.rewards.config import TERMS, RewardConfig, TermScore
from minuscule.rewards.score import RewardBreakdown, RewardScorer, TermResult, score

__all__ = ["TERMS", "RewardBreakdown", "RewardConfig", "RewardScorer", "TermResult", "TermScore", "score"]
