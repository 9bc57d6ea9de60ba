# The rule of the conftest comparison (docs/performance.md), as
# .the-loop/hooks/records.star says it to the-loop: the two find the same
# records of the fixture.
package main

statuses := {"draft", "in-review", "approved"}

deny contains msg if {
	not statuses[input.status]
	msg := sprintf("unknown status %v", [input.status])
}

deny contains msg if {
	input.status == "approved"
	count(object.get(input, "approvedBy", [])) == 0
	msg := "approved without an approver"
}
