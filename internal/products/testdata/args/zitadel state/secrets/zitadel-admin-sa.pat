fixture-pat
