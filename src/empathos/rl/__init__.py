"""empathos.rl"""
