// tParset: tests pending
