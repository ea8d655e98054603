"""The commit's verdict: change type, importance, reach and the rules' write-up."""
