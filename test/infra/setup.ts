// Synthesis is CPU-bound; give the odd slow synth room on small machines.
jest.setTimeout(30_000);
