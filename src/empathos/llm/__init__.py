"""empathos.llm"""
