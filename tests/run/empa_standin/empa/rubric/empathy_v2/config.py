"""The rubric object of the stand-in."""


class EmpathyRubricV2:
    def generate_test_model_system_prompt(self) -> str:
        return "STANDIN SYSTEM PROMPT: you are a kind listener."
