"""empathos.scenarios"""
