"""The studio's run of test cases: a matrix of cases × models, its runner and its views."""
