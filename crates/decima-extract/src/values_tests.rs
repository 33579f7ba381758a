use super::*;

fn values(s: &str) -> Vec<&str> {
    value_spans(s, &[])
        .into_iter()
        .map(|(a, b)| &s[a..b])
        .collect()
}

#[test]
fn bare_numbers_and_names_are_values() {
    assert_eq!(values("sorry, it is 15, not 12"), vec!["15", "12"]);
    assert_eq!(values("流失窗口是45天。"), vec!["45"]);
    assert_eq!(values("Q3 and 3rd and x86 and batch-17"), vec!["17"]);
    assert_eq!(values("clip at p99.5, alert on P95"), vec!["p99.5", "P95"]);
    let only = |s: &'static str| new_value_only(s).map(|(a, b)| &s[a..b]);
    assert_eq!(
        values("heavy jobs in the 21:00–07:00 CET window, from 2026-01-01 – 2026-03-31"),
        vec!["21:00–07:00 CET", "2026-01-01 – 2026-03-31"]
    );
    assert_eq!(only("scratch that, use Pro"), Some("Pro"));
    assert_eq!(only("no, make it 0.85."), Some("0.85"));
    assert_eq!(only("sorry, it's fine"), None);
    assert_eq!(only("we use Pro"), None);
    assert_eq!(
        values("The account manager is Jean-Luc Picard, not Riker."),
        vec!["Jean-Luc Picard"]
    );
    assert_eq!(values("The report language is German."), vec!["German"]);
    assert_eq!(
        values("Send it to the Banco de la Nación team"),
        vec!["Banco de la Nación"]
    );
    assert_eq!(values("他们的 SLA 是 99.5"), vec!["99.5"]);
    assert!(values("I think it is fine.").is_empty());
    assert_eq!(
        values("I found the vendor contact in the contract PDF: Dana Whitfield, then left."),
        vec!["Dana Whitfield"]
    );
    assert_eq!(
        values(
            "The invoices are issued to the legal entity Northwind Data Services B.V., not the brand."
        ),
        vec!["Northwind Data Services B.V"]
    );
    assert!(values("Could you double-check the EU numbers").is_empty());
    assert!(values("Google Sheet works for me").is_empty());
    let copula = |s: &'static str| copula_value(s).map(|(a, b)| &s[a..b]);
    assert_eq!(
        values("发票抬头是法律主体 Northwind Data Services B.V.，不是品牌名"),
        vec!["Northwind Data Services B.V"]
    );
    assert_eq!(
        copula("please use cancellation date for churn date; it is"),
        Some("cancellation date")
    );
    assert_eq!(
        copula("关于异常值：采用取对数，后续不再调整。"),
        Some("取对数")
    );
    let t = "流失窗口为 51 天，今早";
    let v = with_unit(t, (t.find('5').unwrap(), t.find('5').unwrap() + 2));
    assert_eq!(&t[v.0..v.1], "51 天");
    assert_eq!(
        copula("The output format should be parquet."),
        Some("parquet")
    );
    assert_eq!(copula("报告币种是欧元，别弄错。"), Some("欧元"));
    assert_eq!(copula("这还是老问题。"), None);
    assert_eq!(copula("Is it done"), None);
}
