/// Scripted answers for the shipped form templates (Plugins/Forms), shared by the engine tests and the CLI tests.
public enum FormScripts {
    /// A complete DMV renewal in California with a name change, REAL ID and the organ-donation contribution (not
    /// suspended, no veteran designation).
    public static let dmv = [
        "yes", "California", "Maria Lopez", "04/23/1985", "D1234567", "yes", "Maria Garcia", "1200 Main Street",
        "Sacramento", "95814", "no", "maria@example.com", "+1 916 555 0100", "no", "no", "yes", "yes", "no", "yes",
        "card", "12/15/2026", "yes",
    ]

    /// A complete DS-160: married, no previous travel or refusal, both parents named and not in the U.S., no
    /// relatives there, one security "yes" with its explanation.
    public static let ds160 = [
        "ERIKSSON", "ANNA MARIA", "female", "1974-08-12", "STOCKHOLM", "SWE", "married", "ERIKSSON", "JOHN",
        "1972-01-02", "1", "2027-03-01", "14", "350 Fifth Avenue", "New York", "NY", "10118", "no", "no",
        "L898902C3", "SWE", "2022-04-15", "2032-04-14", "ERIKSSON", "LARS", "1945-03-04", "no", "ERIKSSON", "BIRGIT",
        "1948-05-06", "no", "no", "no", "no", "yes", "Fined for speeding in 2019, paid.", "no", "no",
        "employed", "ACME AB", "40000", "anna@example.com", "+46 8 123 456", "yes", "yes",
    ]
}
