match_kind { exact }
control C(inout bit<8> x) {
    action set() { x = 1; }
    table t {
        key = { x: exact; }
        actions = { set; }
    }
    apply { t.apply(); }
}
