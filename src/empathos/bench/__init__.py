"""empathos.bench"""
