package main

func helper() {}
