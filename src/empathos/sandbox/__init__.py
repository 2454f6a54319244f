"""empathos.sandbox"""
