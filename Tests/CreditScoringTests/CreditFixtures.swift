import CreditScoringPlugin
import Foundation

/// Temporary files and a small conversation for the credit-scoring tests.
enum CreditFixtures {
    static func temporaryDirectory() throws -> URL {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("credit-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir
    }

    static func file(_ text: String, name: String = "messages.txt") throws -> URL {
        let url = try temporaryDirectory().appendingPathComponent(name)
        try Data(text.utf8).write(to: url)
        return url
    }

    /// A plain-format history: a mother (kinship, Arabic and English), a friend who lends money.
    static let plain = """
        2024-03-01T10:15 | Mom | Good morning habibi, did you eat?
        2024-03-01T10:20 | me | Yes mom, thanks! Love you
        2024-03-02T09:00 | Sam | Can you return the loan money this week?
        2024-03-02T09:05 | me | I promise I will pay the loan tomorrow
        2024-03-03T12:00 | me | Paid, I transferred the money
        2024-03-03T12:10 | Sam | Received, thanks!
        2024-03-05T08:00 | أمي | صباح الخير يا حبيبي، اشتقت لك
        2024-03-05T08:30 | me | صباح النور يا امي، سأسدد قرض الإيجار بكرة
        2024-03-10T11:00 | Mom | Dear, call your sister
        2024-03-11T11:00 | me | Sure mom, new idea: a course together?
        2024-04-20T10:00 | Sam | I am still waiting for the rent money you owe
        2024-04-21T10:00 | me | Sorry, I will pay the rent debt next week
        2024-05-01T10:00 | Sam | Still waiting for the money, this is late

        """
}
