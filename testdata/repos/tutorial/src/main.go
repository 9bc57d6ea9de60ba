// SPDX-License-Identifier: MIT

package main

func main() {}
