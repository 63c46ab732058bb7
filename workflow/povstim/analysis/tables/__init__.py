"""What did each model get right? Tidy scores, accuracy and chi-square tables (POSH Tables 3 and 8), metric
sensitivity, Experiment 3, published accuracies, the report's conditions table."""
