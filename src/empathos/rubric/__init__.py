"""empathos.rubric"""
