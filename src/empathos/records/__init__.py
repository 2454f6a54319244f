"""empathos.records"""
