"""empathos.epm"""
