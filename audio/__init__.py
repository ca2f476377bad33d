"""Speech for encounter-sim: Piper TTS, faster-whisper STT, channel effects, the voice channel.

Empty face for now; the voice channel issue fills it. It may import scenarios and the types of
sim.records only.
"""
