"""The OR-Tools routing model every pipeline routes on, the point VRP, PyVRP starts, drone assignment."""
