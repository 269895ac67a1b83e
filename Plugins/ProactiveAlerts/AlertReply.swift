import AbsherData
import SanadChat
import SanadCore

/// How the reply to a tapped alert chip is asked for and checked (see `GroundedReply`).
public enum AlertReply {
    /// The days as said in a sentence: `باقي 45 يوماً` / `تنتهي اليوم` / `انتهت منذ 3 أيام`.
    static func remaining(_ alert: ProactiveAlert) -> String {
        let d = alert.daysRemaining
        if d < 0 { return "\(alert.serviceType.isFeminine ? "انتهت" : "انتهى") منذ \(arabicDays(-d))" }
        return d == 0 ? "تنتهي اليوم" : "باقي \(arabicDays(d))"
    }

    /// The template sentence: the title, the days remaining, the expiry date, the service and fee, and the call to
    /// action. Always correct; used when the generated text fails the check.
    public static func fallback(for alert: ProactiveAlert) -> String {
        let s = alert.serviceType
        let expires = s.isFeminine ? "تنتهي" : "ينتهي"
        var text = "\(alert.title): "
        if alert.isOverdue {
            text +=
                "\(s.isFeminine ? "انتهت" : "انتهى") \(s.documentName) منذ \(arabicDays(-alert.daysRemaining)) "
                + "(في \(alert.document.expiryDate))."
        } else if alert.daysRemaining == 0 {
            text += "\(expires) \(s.documentName) اليوم (\(alert.document.expiryDate))."
        } else {
            text +=
                "باقي \(arabicDays(alert.daysRemaining)) على انتهاء \(s.documentName) (\(expires) في \(alert.document.expiryDate))."
        }
        text += " \(s.isFeminine ? "جدّدها" : "جدّده") الآن من خدمة \(s.serviceName)"
        if let fee = alert.document.renewalFeeSAR { text += "، الرسوم \(fee) ريال" }
        text += "، بالضغط على الرابط أدناه."
        return text
    }

    /// The prompt: a system message with the facts and the instructions (in English, which small models follow
    /// best), then the chip text as the user's turn. No example reply is included: the template sentence alone is
    /// about 170 tokens in SmolLM2's vocabulary, which would more than double the prompt on a small device.
    public static func messages(for alert: ProactiveAlert, userText: String) -> [ChatMessage] {
        let s = alert.serviceType
        var facts = [
            "- العنوان: \(alert.title)",
            alert.isOverdue ? "- الحالة: \(remaining(alert))" : "- المتبقي: \(remaining(alert))",
            "- تاريخ الانتهاء: \(alert.document.expiryDate)",
            "- الخدمة: \(s.serviceName)",
        ]
        if let fee = alert.document.renewalFeeSAR { facts.append("- الرسوم: \(fee) ريال") }
        let system = """
            You are Sanad, the assistant of the Absher government e-services app. Reply in Arabic only, in one or two \
            short sentences. Use these facts exactly and add no other numbers:
            \(facts.joined(separator: "\n"))
            Say the title and \(
                alert.isOverdue
                    ? "that it expired \(-alert.daysRemaining) days ago" : "that \(alert.daysRemaining) days remain"), \
            then ask the user to renew now with the link below.
            """
        return [.system(system), .user(userText)]
    }

    /// The facts the text must state: the document (by its title or name) and the days remaining (or, overdue, the
    /// days since it expired).
    public static func facts(for alert: ProactiveAlert) -> [GroundingFact] {
        let d = abs(alert.daysRemaining)
        var days = ["\(d) يوم", "\(d) يوما", "\(d) أيام", "\(d)يوم", "\(d) ايام", arabicDays(d)]
        if d == 0 { days += ["اليوم"] }
        return [
            GroundingFact(
                name: "العنوان (\(alert.serviceType.documentName))", accepted: alert.serviceType.documentWordings),
            GroundingFact(name: alert.isOverdue ? "منتهية منذ (\(d))" : "الأيام المتبقية (\(d))", accepted: days),
        ]
    }

    /// Numbers the text may contain: the days, the fee, the expiry date's parts and the document number's digits.
    public static func allowedNumbers(for alert: ProactiveAlert) -> [String] {
        let e = alert.document.expiryDate
        var numbers = ["\(abs(alert.daysRemaining))", "\(e.year)", "\(e.month)", "\(e.day)"]
        if let fee = alert.document.renewalFeeSAR { numbers.append("\(fee)") }
        if let n = alert.document.number { numbers += digitGroups(n) }
        return numbers
    }

    /// The whole grounded request for `alert`.
    public static func grounded(for alert: ProactiveAlert, userText: String) -> GroundedReply {
        GroundedReply(
            messages: messages(for: alert, userText: userText), facts: facts(for: alert),
            allowedNumbers: allowedNumbers(for: alert), requireArabic: true, fallback: fallback(for: alert),
            deepLink: alert.deepLink)
    }

    static func digitGroups(_ text: String) -> [String] {
        var groups: [String] = []
        var current = ""
        for c in text {
            if c.isASCII && c.isNumber {
                current.append(c)
            } else if !current.isEmpty {
                groups.append(current)
                current = ""
            }
        }
        if !current.isEmpty { groups.append(current) }
        return groups
    }
}
