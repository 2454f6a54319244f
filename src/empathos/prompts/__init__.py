"""empathos.prompts"""
