"""The vehicle simulator (mission protocol with fault injection) and its simulated flight.

For tests, demos and field rehearsal only: no production module imports this package.
"""
