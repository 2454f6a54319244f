"""empathos.report"""
